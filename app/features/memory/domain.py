"""Pure memory rules: keys, timestamps, fact lines, rendering and index order."""

import base64
import binascii
import hashlib
import hmac
import re
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import NoReturn

from pydantic import TypeAdapter

from app.shared.errors import Location, file_absent_error, version_conflict_error

from .ports import FileMetadata, ListedObject, Storage, StoredObject
from .schemas import CappedArea, FileEntry, MemoryFile, MemoryIndex

SYSTEM_AREA = "system"
FACT_LINE = re.compile(r"- \[(?:stated|observed|inferred|system)\] ([^\n]*)")


@dataclass(frozen=True, slots=True)
class Address:
    """A resolved file: where the caller sees it and the storage key behind it."""

    location: Location
    key: str
    entity_prefix: str


def file_key(scope: str, entity_id: str, area: str, name: str) -> str:
    return f"{scope}/{entity_id}/{area}/{name}.md"


def entity_prefix(scope: str, entity_id: str) -> str:
    return f"{scope}/{entity_id}/"


def format_timestamp(moment: datetime) -> str:
    # isoformat writes six fractional digits exactly when microseconds are
    # non-zero, as SPEC §2 wants, at a third of strftime's cost.
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


def parse_timestamp(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no UTC offset")
    return moment.astimezone(UTC)


def is_fact_line(line: str) -> bool:
    match = FACT_LINE.fullmatch(line)
    return match is not None and bool(match.group(1).strip())


def appended(content: str, line: str) -> str:
    separator = "\n" if content and not content.endswith("\n") else ""
    return f"{content}{separator}{line}\n"


def count_matches(content: str, needle: str) -> int:
    """Occurrences of ``needle`` at every start index, overlaps included."""
    count, start = 0, content.find(needle)
    while start != -1:
        count += 1
        start = content.find(needle, start + 1)
    return count


def merged_aliases(
    stored: Sequence[str], added: Iterable[str] | None
) -> tuple[str, ...]:
    result = list(stored)
    for alias in added or ():
        if alias not in result:
            result.append(alias)
    return tuple(result)


def with_source(sources: Iterable[str], source: str) -> tuple[str, ...]:
    return tuple(sorted({*sources, source}))


def edited_metadata(
    old: FileMetadata,
    *,
    description: str | None,
    aliases: Iterable[str] | None,
    source: str,
    now: datetime,
) -> FileMetadata:
    """An edit's metadata: a given description replaces, aliases only grow."""
    return FileMetadata(
        old.description if description is None else description,
        merged_aliases(old.aliases, aliases),
        with_source(old.sources, source),
        now,
    )


def render_file(
    location: Location, data: bytes, meta: FileMetadata, version: str
) -> MemoryFile:
    return MemoryFile(
        scope=location.scope,
        area=location.area,
        name=location.name,
        content=data.decode(),
        version=version,
        description=meta.description,
        aliases=list(meta.aliases),
        sources=list(meta.sources),
        last_updated=format_timestamp(meta.last_updated),
    )


def render_stored(location: Location, stored: StoredObject) -> MemoryFile:
    return render_file(location, stored.data, stored.metadata, stored.version)


def split_key(key: str) -> tuple[str, str, str] | None:
    """(scope, area, name) of a well-formed file key, else None."""
    parts = key.split("/")
    if len(parts) != 4 or not parts[3].endswith(".md") or len(parts[3]) <= 3:
        return None
    return parts[0], parts[2], parts[3][:-3]


def render_entry(listed: ListedObject) -> FileEntry | None:
    parts = split_key(listed.key)
    if parts is None:
        return None
    meta = listed.metadata
    return FileEntry(
        scope=parts[0],
        area=parts[1],
        name=parts[2],
        version=listed.version,
        description=meta.description,
        aliases=list(meta.aliases),
        sources=list(meta.sources),
        last_updated=format_timestamp(meta.last_updated),
    )


_ENTRY_JSON = TypeAdapter(FileEntry)


def entry_cost(entry: FileEntry) -> int:
    """Bytes of the entry's compact UTF-8 JSON (keys in order, non-ASCII unescaped).

    Pydantic's serializer writes the same bytes as ``json.dumps(...,
    separators=(",", ":"), ensure_ascii=False)``, several times faster.
    """
    return len(_ENTRY_JSON.dump_json(entry))


def _tier(entry: FileEntry, priority: Sequence[str]) -> int:
    if entry.area == SYSTEM_AREA:
        return 0
    if entry.scope in priority:
        return 1 + priority.index(entry.scope)
    return 1 + len(priority)


def build_index(
    listed: Iterable[ListedObject], *, priority: Sequence[str], max_bytes: int
) -> MemoryIndex:
    """Order every entry, keep the prefix that fits the budget, count the rest."""
    ranked: list[tuple[int, int, str, FileEntry]] = []
    for item in listed:
        entry = render_entry(item)
        if entry is not None:
            micros = _epoch_micros(item.metadata.last_updated)
            ranked.append((_tier(entry, priority), -micros, item.key, entry))
    ranked.sort(key=itemgetter(0, 1, 2))
    kept: list[FileEntry] = []
    omitted: Counter[tuple[str, str]] = Counter()
    total = 0
    for *_, entry in ranked:
        cost = entry_cost(entry) if not omitted else 0
        if not omitted and total + cost <= max_bytes:
            kept.append(entry)
            total += cost
        else:
            omitted[(entry.scope, entry.area)] += 1
    capped = [
        CappedArea(scope=scope, area=area, omitted=count)
        for (scope, area), count in sorted(omitted.items())
    ]
    return MemoryIndex(entries=kept, capped=capped)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _epoch_micros(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICROSECOND


def _tag(key: bytes, listing: str, position: str) -> str:
    digest = hmac.new(key, f"{listing}\0{position}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(digest.digest()[:12]).decode().rstrip("=")


def encode_cursor(key: bytes, listing: str, position: str) -> str:
    """An opaque cursor: a position relative to the listing, tagged by HMAC.

    ``listing`` names the caller's entity, scope and area, so a cursor used for
    any other listing fails its tag, and the entity id never enters the cursor.
    """
    body = base64.urlsafe_b64encode(position.encode()).decode().rstrip("=")
    return f"{body}.{_tag(key, listing, position)}"


def decode_cursor(key: bytes, listing: str, cursor: str) -> str | None:
    """The position encoded in ``cursor`` for ``listing``, or None if not issued."""
    body, dot, tag = cursor.partition(".")
    if not dot or not cursor.isascii():
        return None
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        position = raw.decode()
    except (binascii.Error, ValueError):
        return None
    if not hmac.compare_digest(tag, _tag(key, listing, position)):
        return None
    return position


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    max_file_bytes: int = 16384
    index_max_bytes: int = 65536
    list_page_size: int = 100
    max_files_per_entity: int = 500
    """0 means no cap."""
    scope_priority: tuple[str, ...] = ()


async def load_existing(storage: Storage, address: Address) -> StoredObject:
    stored = await storage.get(address.key)
    if stored is None:
        raise file_absent_error(address.location)
    return stored


async def raise_current_state(storage: Storage, address: Address) -> NoReturn:
    """After a failed precondition: the file is gone, or here is its new state."""
    stored = await load_existing(storage, address)
    raise version_conflict_error(address.location, stored.data.decode(), stored.version)


def require_version(address: Address, stored: StoredObject, expected: str) -> None:
    if stored.version != expected:
        raise version_conflict_error(
            address.location, stored.data.decode(), stored.version
        )


LIST_BATCH = 1000


async def list_all(storage: Storage, prefix: str) -> list[ListedObject]:
    listed: list[ListedObject] = []
    start_after: str | None = None
    while True:
        page = await storage.list_page(
            prefix, start_after=start_after, limit=LIST_BATCH
        )
        listed.extend(page)
        if len(page) < LIST_BATCH:
            return listed
        start_after = page[-1].key


async def list_batches(
    storage: Storage, prefix: str, *, batch: int = LIST_BATCH
) -> AsyncIterator[Sequence[ListedObject]]:
    """Every object under ``prefix``, one ``list_page`` batch at a time, ascending.

    Not a snapshot: a batch resumes after the last key of the one before, so
    deleting what a batch listed does not skip anything.
    """
    start_after: str | None = None
    while True:
        page = await storage.list_page(prefix, start_after=start_after, limit=batch)
        if page:
            yield page
        if len(page) < batch:
            return
        start_after = page[-1].key
