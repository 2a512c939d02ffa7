"""Idempotency-Key records: Tenchi's store, plus erasing them by entity or by file.

A record's scope is the entity prefix of the file its call named, then the
caller (``record_scope``), so a purge can erase every record of an entity
(``erase_scope``) whoever made it: after it no byte of a keyed write's key
survives, and a key used before the purge runs afresh. Its fingerprint tags
the files the call named (``record_fingerprint``: digests of their storage
keys, never a name), so a sweep erases the records of the files it erased
(``erase_files``) and a keyed retry of another file still replays.
"""

import hashlib
from collections.abc import Iterable, Sequence
from typing import Protocol

from tenchi.idempotency import IdempotencyStore


def record_scope(entity_prefix: str, caller: str) -> str:
    """The scope of a record: ``scope/entity/`` (or "" unknown), then the caller.

    An entity prefix ends in ``/`` and its segments never hold one, so a
    prefix match on it never reaches another entity's records.
    """
    return f"{entity_prefix}{caller}"


UNNAMED = "@*"
"""The tag of a call that names no file by area and name (the memory tool's
commands): every sweep of its entity erases it, as it cannot tell its files."""


def file_tag(key: str) -> str:
    """What a record keeps of a file its call named: ``@`` and 32 hex digits of
    the storage key's SHA-256 (``@`` starts every tag, so a tag found in a
    fingerprint is that whole tag)."""
    return "@" + hashlib.sha256(key.encode()).hexdigest()[:32]


def record_fingerprint(operation: str, keys: Sequence[str], digest: str) -> str:
    """A record's fingerprint: the operation, the tags of the files it names
    (``UNNAMED`` for none), then the request's digest."""
    tags = "".join(file_tag(key) for key in keys) or UNNAMED
    return f"{operation}:{tags}:{digest}"


def sweep_tags(keys: Iterable[str]) -> list[str]:
    """The tags ``erase_files`` takes for erased ``keys``: theirs and UNNAMED."""
    return [*(file_tag(key) for key in keys), UNNAMED]


class RequestRecords(IdempotencyStore, Protocol):
    """Idempotency records a purge can erase by entity, a sweep by file."""

    async def erase_scope(self, prefix: str) -> int:
        """Delete every record whose scope starts with ``prefix``, in any state
        and namespace; the number deleted. Safe to repeat."""
        ...

    async def erase_files(self, prefix: str, tags: Sequence[str]) -> int:
        """Delete every record whose scope starts with ``prefix`` and whose
        fingerprint holds one of ``tags`` (``sweep_tags``), in any state and
        namespace; the number deleted. Safe to repeat."""
        ...
