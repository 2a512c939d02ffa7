"""The Idempotency-Key records port: Tenchi's store, plus erasing an entity's records.

A record's scope is the entity prefix of the file its call named, then the
caller (``record_scope``), so a purge can erase every record of an entity
(``erase_scope``) whoever made it: after it no byte of a keyed write's key
survives, and a key used before the purge runs afresh.
"""

from typing import Protocol

from tenchi.idempotency import IdempotencyStore


def record_scope(entity_prefix: str, caller: str) -> str:
    """The scope of a record: ``scope/entity/`` (or "" unknown), then the caller.

    An entity prefix ends in ``/`` and its segments never hold one, so a
    prefix match on it never reaches another entity's records.
    """
    return f"{entity_prefix}{caller}"


class RequestRecords(IdempotencyStore, Protocol):
    """Idempotency records a purge can erase by entity."""

    async def erase_scope(self, prefix: str) -> int:
        """Delete every record whose scope starts with ``prefix``, in any state
        and namespace; the number deleted. Safe to repeat."""
        ...
