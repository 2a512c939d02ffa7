"""When the files of an entity expire, read apart from their listing if storage can."""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable


@runtime_checkable
class ListsExpiries(Protocol):
    """Storage that answers an entity's expiry moments without listing its files.

    The conditional index asks on every revalidation (its tag moves when a
    file expires); SQLite answers from a partial index of expiring files.
    Other storage leaves it to the entity's listing.
    """

    async def expiry_moments(self, prefixes: Sequence[str]) -> Sequence[datetime]:
        """The ``expires_at`` of every object under any of ``prefixes`` that
        has one, expired or not, in no particular order."""
        ...
