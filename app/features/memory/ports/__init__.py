"""The feature's ports: object storage with version history, and the index cache."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .change_feed import ChangeFeed as ChangeFeed
from .change_feed import ChangeLogPage as ChangeLogPage
from .change_feed import LoggedChange as LoggedChange

if TYPE_CHECKING:  # the search corpus is built from these ports' types
    from app.features.audit.ports import PendingEvent
    from app.features.search.domain.corpus import Corpus


@dataclass(frozen=True, slots=True)
class FileMetadata:
    """What is stored beside a body; it always commits together with the body."""

    description: str
    aliases: tuple[str, ...]
    sources: tuple[str, ...]
    last_updated: datetime
    expires_at: datetime | None = None
    """From this instant (UTC) the file is gone for every reader."""


@dataclass(frozen=True, slots=True)
class StoredObject:
    data: bytes
    metadata: FileMetadata
    version: str
    updated_text: str | None = None
    """``metadata.last_updated`` as a file shows it (``format_timestamp``'s text),
    when storage holds exactly that text; None: formatted when shown."""


@dataclass(frozen=True, slots=True)
class ListedObject:
    key: str
    metadata: FileMetadata
    version: str
    updated_text: str
    """``metadata.last_updated`` as a listing shows it (``format_timestamp``'s
    text): storage that holds exactly that text hands it over, so an index does
    not format each entry's moment again."""


@dataclass(frozen=True, slots=True)
class Change:
    """Who made a mutation and how: what its version record says.

    ``at`` is the clock when the call ran (retention measures age from it);
    a tombstone is stamped with it too.
    """

    operation: str
    actor: str
    at: datetime
    call: str = ""
    """The context's ``call_key``: a repeat of the call can recognise this change."""
    event: "PendingEvent | None" = None
    """The call's audit event (the context's ``audit_event``): storage whose
    database holds the audit log commits it in this change's own transaction."""


@dataclass(frozen=True, slots=True)
class Write:
    """What one put stores under ``key``; with a ``change`` it is also recorded."""

    key: str
    data: bytes
    metadata: FileMetadata
    change: Change | None = None
    version: str | None = None
    """A restore's own version, kept where storage names versions (not GCS)."""


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """One landed mutation of one key: the object as it stood right after it.

    ``data`` is None in listings; a tombstone (``deleted``) has empty data and
    the metadata of the object it deleted, stamped with the delete's time.
    """

    version: str
    operation: str
    actor: str
    deleted: bool
    size: int
    metadata: FileMetadata
    data: bytes | None = None
    call: str = ""
    """The ``Change.call`` that made it where storage keeps it (GCS); else ""."""


@dataclass(frozen=True, slots=True)
class HistoryRetention:
    """How much history each key keeps; ``max_days`` 0 means no age limit."""

    max_versions: int = 100
    max_days: int = 90
    changes_seconds: int = 7 * 86_400
    """How long the change feed keeps a change (``ChangeFeed``)."""


class Storage(Protocol):
    """Objects under string keys, each with metadata and an opaque version.

    Every method is atomic on its own. Versions are opaque strings: a new one is
    distinct from every earlier version of the same key, also across a delete
    and re-create. Timeouts and outages raise the BackendUnavailable AppError;
    a failed precondition is an ordinary return value, never an exception.

    History: a mutation given a ``change`` adds exactly one VersionRecord to its
    key if and only if it lands (a delete leaves a tombstone record); one
    without (operator seeding, purges) adds none. After each recorded write the
    adapter prunes that key's history to the retention it was opened with,
    removing at most a few records per write and never the newest one.
    """

    async def own_change(self, key: str, call: str) -> VersionRecord | None:
        """The record, with its data, of the change the call ``call`` made to ``key``.

        Only storage that keeps each change's ``Change.call`` (GCS, where a
        write can end with its outcome unknown) can answer: it looks among the
        key's newest records. Elsewhere no record can be a repeated call's
        own, and this answers None without reading anything.
        """
        ...

    async def get(self, key: str) -> StoredObject | None:
        """The object at exactly ``key``, or None; never a prefix match."""
        ...

    async def put(self, write: Write) -> str:
        """Replace unconditionally and return the new version."""
        ...

    async def put_if_version(self, write: Write, expected: str | None) -> str | None:
        """Write only if the current version is ``expected`` (None: must not exist).

        Returns the new version, or None when the precondition failed, in which
        case nothing changed.
        """
        ...

    async def delete_if_version(
        self, key: str, expected: str, *, change: Change | None = None
    ) -> bool:
        """Delete only at ``expected``; False (nothing changed) otherwise."""
        ...

    async def erase_if_version(self, key: str, expected: str) -> bool:
        """Erase ``key`` only at ``expected``, with every version record of it.

        Nothing of the file stays: no tombstone, no history, no search rows,
        no copy the backend keeps of its bytes (a noncurrent generation, a WAL
        page), and no change is logged. False (nothing changed) when ``key``
        is not at ``expected``, so a file rewritten since it was listed stays
        whole. Only ``key`` itself: never a key it is a prefix of.
        """
        ...

    async def list_versions(
        self, key: str, *, after: str | None, limit: int
    ) -> Sequence[VersionRecord]:
        """Up to ``limit`` records of ``key`` without data, newest first.

        With ``after``, only records older than the one of that version; once
        that record is no longer kept the page may be empty.
        """
        ...

    async def get_version(self, key: str, version: str) -> VersionRecord | None:
        """The record of ``key`` at ``version`` with its data, or None."""
        ...

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
        """Up to ``limit`` objects whose key starts with ``prefix``, ascending.

        Keys compare by code point (GCS's order); only keys strictly after
        ``start_after`` are returned. Bodies are never read.
        """
        ...

    async def count(self, prefix: str) -> int:
        """How many objects have a key starting with ``prefix``."""
        ...

    async def ping(self) -> None:
        """Return when the backend answers; raise BackendUnavailable otherwise."""
        ...

    async def scrub(self, prefix: str) -> None:
        """Erase what deleting every object under ``prefix`` may have left behind.

        That includes every version record of every key under ``prefix``. Run
        after a purge, so no byte of a deleted object survives in the
        backend: freed pages and journals, empty directories named after the
        prefix, noncurrent generations. It may work on the whole backend, not
        only the prefix; where a delete leaves nothing behind it is a no-op.
        Raises BackendUnavailable when the erasure cannot complete.
        """
        ...


type Edit = Callable[[StoredObject | None], Write]
"""A pure edit of the object at a key as it is now (None: absent): what to store.

It raises the caller's error to refuse; nothing is then written."""


@runtime_checkable
class EditsInPlace(Protocol):
    """Storage that reads, edits and writes one key in one transaction (SQLite).

    Other storage leaves an edit to ``storage_reads.edit_existing``: a get,
    then a put guarded by the version it read.
    """

    async def edit_in_place(self, key: str, edit: Edit) -> tuple[Write, str | None]:
        """``edit`` of the current object, stored guarded by the version it had.

        Returns the write and its new version (None: the object changed in
        between, nothing was written); what ``edit`` raises is raised here.
        """
        ...


@dataclass(frozen=True, slots=True)
class CachedCorpus:
    corpus: "Corpus | None"
    stamp: str


@dataclass(frozen=True, slots=True)
class CachedListing:
    listing: Sequence[ListedObject] | None
    stamp: str


class IndexCache(Protocol):
    """Per-entity metadata listings, kept for a TTL and dropped on every write.

    A listing read from storage is stored with the stamp seen before the read,
    so a write that lands between the read and the store is never masked.
    """

    async def get(self, prefix: str) -> CachedListing:
        """The cached listing of ``prefix`` (None when absent or expired)."""
        ...

    async def set(
        self, prefix: str, listing: Sequence[ListedObject], *, stamp: str
    ) -> None:
        """Store ``listing`` unless ``prefix`` was invalidated since ``stamp``."""
        ...

    async def get_corpus(self, prefix: str) -> CachedCorpus:
        """The cached search corpus of ``prefix`` (None when absent or expired).

        Corpora share the listing's stamps: one invalidation drops both.
        """
        ...

    async def set_corpus(self, prefix: str, corpus: "Corpus", *, stamp: str) -> None:
        """Store ``corpus`` unless ``prefix`` was invalidated since ``stamp``."""
        ...

    async def invalidate(self, prefix: str, *, after_write: bool = False) -> None:
        """Forget ``prefix`` (listing and corpus); the next read lists storage again.

        ``after_write``: the caller's own write to ``prefix`` just landed, so
        where storage moves the backend's change marker with every write
        (SQLite) the marker is not moved a second time.
        """
        ...
