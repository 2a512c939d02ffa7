"""The search connection, and its background drain of the files marked pending.

Every write only marks its file pending, and a search indexes what is pending
in its own reach first, so the drain is never needed for a correct answer: it
keeps the first search after many writes (an import) from indexing them all.
Every ``every`` seconds it indexes what is pending anywhere, one bounded batch
at a time, pausing between batches so writers get the write lock; it stops
after the batch in progress when the storage closes.
"""

import asyncio
import logging
import sqlite3
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager, suppress

from app.infra.sqlite.connection import BUSY_TIMEOUT_MS
from app.infra.sqlite.search import SqliteSearchIndex

DRAIN_SECONDS = 1.0
"""How long pending files wait, at most, for the background drain."""
PAUSE_SECONDS = 0.01
"""The pause between two batches of one drain."""

_log = logging.getLogger(__name__)


def open_search_connection(path: str) -> sqlite3.Connection:
    """The search connection: used from worker threads, one at a time.

    It writes when it indexes pending files, with ``synchronous=NORMAL`` even
    when writes sync in full: a power loss may undo an indexing transaction,
    and with it the clearing of its marks, so those files are pending again.
    A later write's full sync carries the earlier indexing to disk with it.
    """
    connection = sqlite3.connect(
        path,
        isolation_level=None,
        check_same_thread=False,
        timeout=BUSY_TIMEOUT_MS / 1000,
    )
    connection.execute("PRAGMA secure_delete = ON")
    connection.execute("PRAGMA synchronous = NORMAL")
    return connection


@asynccontextmanager
async def open_search_index(
    path: str, *, drain_every: float | None = DRAIN_SECONDS
) -> AsyncGenerator[SqliteSearchIndex]:
    """The search index of ``path``, drained every ``drain_every`` seconds
    (None: only searches index pending files)."""
    connection = await asyncio.to_thread(open_search_connection, path)
    index = SqliteSearchIndex(connection)
    stop = asyncio.Event()
    drain = None
    if drain_every is not None:
        drain = asyncio.create_task(_drain(index, stop, drain_every))
    try:
        yield index
    finally:
        stop.set()
        if drain is not None:
            await drain
        connection.close()


async def _drain(index: SqliteSearchIndex, stop: asyncio.Event, every: float) -> None:
    while not stop.is_set():
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
        more = not stop.is_set()
        while more and not stop.is_set():
            try:
                more = await index.drain()
            except Exception:  # the next round tries again; searches never wait on it
                _log.warning("search drain failed", exc_info=True)
                break
            await asyncio.sleep(PAUSE_SECONDS)
