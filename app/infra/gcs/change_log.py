"""The GCS change log: per-entity entries, each claimed by name, then settled.

GCS has no transaction spanning the log and the file, so a recorded write
*claims* its entry before its mutation: it creates the object named by the
entity's next number (``<prefix>\\changes/<entity>\\<seq>``) with
``ifGenerationMatch=0``, so of two writers after one number exactly one gets
it and the other takes the next. The claim names the key, the call and a write
id, which the mutation also stamps on its object. Once the mutation is over
the writer creates the settlement (``<seq>+``, again ``ifGenerationMatch=0``):
``landed`` with the version, or ``void`` when the mutation did not land.

Readers show entries in number order and stop at the first one still pending,
so nothing appears before an earlier number. A pending entry older than
``PENDING_SECONDS`` (its writer crashed or lost its answers) is settled by the
reader: landed when the key's object or its archive holds the write id, else
void. A writer's mutation ends within its deadline, far below that bound, so
the one settlement (the first creation wins) is always the truth.

A file's versions carry their entry's number (``SEQ``): a write that would
replace a version whose number is above its claim voids the claim and claims
again, so one file's versions appear in the order they landed.

An empty log starts at the wall clock in microseconds, so after a purge's
scrub the new numbers start far past every cursor issued before it: such a
cursor finds a gap and is answered CURSOR_EXPIRED.
"""

import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from tenchi.errors import AppError

from app.features.memory.domain import format_timestamp, parse_timestamp
from app.features.memory.domain.keys import entity_prefix_of_key
from app.features.memory.ports import Change, ChangeLogPage, LoggedChange
from app.infra.change_numbers import first_seq
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.requests import OutcomeUnknown
from app.infra.gcs.resources import ObjectResource
from app.shared.clock import utc_now
from app.shared.errors import backend_unavailable_error

LOG = "\\changes/"
SEPARATOR = "\\"
SETTLED = "+"
START = "start"
KEY, OPERATION, ACTOR, AT = "key", "operation", "actor", "at"
WRITE, SEQ, STATE, VERSION = "write", "seq", "state", "version"
LANDED, VOID = "landed", "void"
PENDING_SECONDS = 60.0
"""How long a claim may stay unsettled before readers settle it themselves."""
CLAIM_ATTEMPTS = 32
PRUNE_PER_WRITE = 8
LIST_FIELDS = "items(name,generation,metadata,timeCreated),nextPageToken"
LIST_BATCH = 1000


def _values(resource: ObjectResource) -> dict[str, str]:
    return resource.get("metadata") or {}


def seq_of(resource: ObjectResource | None) -> int:
    """The entry number a stored version carries (0: none)."""
    text = "" if resource is None else _values(resource).get(SEQ, "")
    return int(text) if text.isdigit() else 0


@dataclass(frozen=True, slots=True)
class Claim:
    """A write's number in its entity's log and the id its mutation stamps."""

    entity: str
    seq: int
    write: str

    def stamp(self) -> dict[str, str]:
        return {WRITE: self.write, SEQ: str(self.seq)}


@dataclass(slots=True)
class _Entry:
    seq: int
    claim: ObjectResource
    settled: dict[str, str] | None = None


class GcsChangeLog:
    """The change logs of the entities under one location prefix."""

    def __init__(
        self,
        objects: GcsObjects,
        prefix: str,
        retention: timedelta,
        *,
        archive_prefix: Callable[[str], str],
        pending_seconds: float = PENDING_SECONDS,
    ) -> None:
        self._objects = objects
        self._prefix = prefix
        self.retention = retention
        self._archive_prefix = archive_prefix
        self._pending = pending_seconds
        self._hints: dict[str, int] = {}

    def _directory(self, entity: str) -> str:
        return f"{self._prefix}{LOG}{entity}{SEPARATOR}"

    def _name(self, entity: str, seq: int) -> str:
        return f"{self._directory(entity)}{seq:019d}"

    async def _entries(self, entity: str, start: int | None) -> list[_Entry]:
        """The entries from ``start`` (inclusive; None: the oldest), in order."""
        params = {"prefix": self._directory(entity), "fields": LIST_FIELDS}
        params["maxResults"] = str(LIST_BATCH)
        if start is not None:
            params["startOffset"] = self._name(entity, start)
        entries: list[_Entry] = []
        async for item in self._objects.items(params):
            tail = str(item["name"])[len(self._directory(entity)) :]
            if tail.isdigit():
                entries.append(_Entry(int(tail), item))
            elif entries and tail == f"{entries[-1].seq:019d}{SETTLED}":
                entries[-1].settled = _values(item)
        return entries

    async def _next(self, entity: str) -> int:
        hint = self._hints.get(entity)
        if hint is not None:
            entries = await self._entries(entity, hint)
            if entries and entries[0].seq == hint:
                return entries[-1].seq + 1
        entries = await self._entries(entity, None)
        return entries[-1].seq + 1 if entries else await self._start(entity)

    async def _start(self, entity: str) -> int:
        """The first number of an empty log (new, or scrubbed by a purge): the
        clock, past every old number, agreed on through one object."""
        name = self._directory(entity) + START
        values = {SEQ: str(first_seq())}
        if not await self._create(name, values):
            found = await self._objects.describe(name)
            values = _values(found) if found is not None else values
        return int(values[SEQ])

    async def claim(self, key: str, change: Change, above: int = 0) -> Claim:
        """The next number of ``key``'s entity (above ``above``), claimed."""
        entity = entity_prefix_of_key(key)
        write = uuid.uuid4().hex
        values = {KEY: key, OPERATION: change.operation, ACTOR: change.actor}
        values |= {AT: format_timestamp(change.at), WRITE: write}
        for _ in range(CLAIM_ATTEMPTS):
            seq = await self._next(entity)
            if seq > above and await self._create(self._name(entity, seq), values):
                self._hints[entity] = seq
                return Claim(entity, seq, write)
        raise backend_unavailable_error("unavailable")

    async def _create(self, name: str, values: dict[str, str]) -> bool:
        """Create ``name`` if absent; whether this call's values are there."""
        try:
            return await self._objects.upload(name, b"", values, "0") is not None
        except OutcomeUnknown:
            found = await self._objects.describe(name)
            return found is not None and _values(found) == values

    async def settle(self, claim: Claim, version: str | None, now: datetime) -> None:
        """Record how the claimed write ended; a failure leaves it for readers."""
        name = self._name(claim.entity, claim.seq) + SETTLED
        values = {STATE: LANDED, VERSION: version} if version else {STATE: VOID}
        # The write itself is over: a settlement that fails here is made by the
        # first reader past PENDING_SECONDS, from the write id the object holds.
        with contextlib.suppress(AppError, OutcomeUnknown):
            await self._create(name, values)
            if version is not None:
                await self._prune(claim, now)

    async def _prune(self, claim: Claim, now: datetime) -> None:
        params = {"prefix": self._directory(claim.entity), "fields": LIST_FIELDS}
        params["maxResults"] = str(2 * PRUNE_PER_WRITE)
        listed = await self._objects.list(params)
        cutoff = now - self.retention
        for item in listed.get("items", []):
            tail = str(item["name"])[len(self._directory(claim.entity)) :]
            if not tail.rstrip(SETTLED).isdigit():
                continue  # the log's start
            seq = int(tail.rstrip(SETTLED))
            at = _values(item).get(AT)
            if seq >= claim.seq or (at is not None and parse_timestamp(at) >= cutoff):
                return
            await self._objects.erase(str(item["name"]), str(item["generation"]))

    async def page(
        self, entity: str, after: int, now: datetime, limit: int
    ) -> ChangeLogPage:
        """Settled entries after ``after`` within the retention, up to the first
        pending one; voided numbers in the page's range are named as such."""
        entries = await self._entries(entity, after or None)
        if after and not entries:
            entries = await self._entries(entity, None)  # for ``last`` alone
        since = now - self.retention
        changes: list[LoggedChange] = []
        voided: list[int] = []
        last = 0
        for entry in entries:
            settled = entry.settled or await self._settle_stale(entity, entry)
            if settled is None:
                break  # later numbers wait until this one settles
            last = entry.seq
            if entry.seq <= after or len(changes) == limit:
                continue
            if settled.get(STATE) != LANDED:
                voided.append(entry.seq)
                continue
            change = _logged(entry, settled[VERSION])
            if change.at >= since:
                changes.append(change)
        return ChangeLogPage(changes, last, tuple(voided))

    async def _settle_stale(self, entity: str, entry: _Entry) -> dict[str, str] | None:
        created = parse_timestamp(str(entry.claim.get("timeCreated") or ""))
        if (utc_now() - created).total_seconds() < self._pending:
            return None
        values = _values(entry.claim)
        version = await self._landed_version(values[KEY], values[WRITE])
        settled = {STATE: LANDED, VERSION: version} if version else {STATE: VOID}
        name = self._name(entity, entry.seq) + SETTLED
        if await self._create(name, settled):
            return settled
        found = await self._objects.describe(name)  # another reader or the writer
        return _values(found) if found is not None else None

    async def _landed_version(self, key: str, write: str) -> str | None:
        """The version holding ``write`` (current object or archive), if any."""
        current = await self._objects.describe(self._prefix + key)
        if current is not None and _values(current).get(WRITE) == write:
            return str(current["generation"])
        params = {"prefix": self._archive_prefix(key), "maxResults": str(LIST_BATCH)}
        listed = await self._objects.list(params | {"fields": LIST_FIELDS})
        for item in listed.get("items", []):
            if _values(item).get(WRITE) == write:
                return _values(item).get(VERSION) or str(item["generation"])
        return None

    async def newest_archived_seq(self, key: str) -> int:
        """The number of ``key``'s newest archived version (0: none)."""
        params = {"prefix": self._archive_prefix(key), "maxResults": "1"}
        listed = await self._objects.list(params | {"fields": LIST_FIELDS})
        items = listed.get("items", [])
        return seq_of(items[0]) if items else 0

    async def scrub(self, prefix: str) -> None:
        """Erase the logs of the entities under ``prefix`` (a whole segment)."""
        if not prefix.endswith("/"):
            return
        for entity in [e for e in self._hints if e.startswith(prefix)]:
            del self._hints[entity]
        params = {"prefix": f"{self._prefix}{LOG}{prefix}", "versions": "true"}
        params |= {"fields": "items(name,generation),nextPageToken"}
        async for item in self._objects.items(params | {"maxResults": str(LIST_BATCH)}):
            await self._objects.erase(str(item["name"]), str(item["generation"]))


def _logged(entry: _Entry, version: str) -> LoggedChange:
    values = _values(entry.claim)
    at = parse_timestamp(values[AT])
    return LoggedChange(
        entry.seq, values[KEY], values[OPERATION], values[ACTOR], at, version
    )
