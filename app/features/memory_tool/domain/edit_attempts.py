"""How often a version-guarded edit of the tool tries, and how long it waits between."""

import random
from collections.abc import AsyncIterator

import anyio

EDIT_ATTEMPTS = 8
"""Edits retried on a version conflict: each retry saw another agent's write land."""
BACKOFF_SECONDS = 0.025
"""The first retry's longest wait; each later one may wait twice as long."""


async def edit_attempts() -> AsyncIterator[int]:
    """The attempt numbers, with a random, growing wait before each retry.

    Without the wait two agents editing one file in a loop race in lockstep:
    the one whose write lands reads and writes again at once, and on storage
    with a slow round trip (GCS) the other can lose every one of its attempts.
    """
    for attempt in range(EDIT_ATTEMPTS):
        if attempt:
            await anyio.sleep(random.uniform(0, BACKOFF_SECONDS * 2 ** (attempt - 1)))
        yield attempt
