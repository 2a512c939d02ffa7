from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC

from app.server.context import AppContext
from app.shared.errors import import_conflict_error, invalid_argument_error
from app.shared.locations import Location

from ..domain import Address, address_of
from ..policy import locate_entity, require_area, require_name, require_path
from ..policy.content import (
    require_description,
    require_metadata_budget,
    require_within_limit,
)
from ..ports import Change, FileMetadata, Storage, Write
from ..ports.storage_reads import raise_current_state
from ..schemas import (
    ExportedRecord,
    FileName,
    ImportedFile,
    ImportMemory,
    ImportMode,
    ImportReport,
)

ATTEMPTS = 3
OUTCOMES = ("created", "overwritten", "skipped")


@dataclass(frozen=True, slots=True)
class _Record:
    """One version record to replay: its change and the file it left."""

    change: Change
    data: bytes
    metadata: FileMetadata
    deleted: bool


@dataclass(frozen=True, slots=True)
class _Restore:
    address: Address
    data: bytes
    metadata: FileMetadata
    history: tuple[_Record, ...] = ()


async def import_memory(request: ImportMemory, context: AppContext) -> ImportReport:
    """Restore an export into one entity: content and metadata exactly as given.

    Every file is checked before anything is written; mode fail writes nothing
    when any file exists. Versions are always new. A file without sources is
    recorded as written by this surface (``task``), one without last_updated at
    the clock's time.
    """
    prefix = locate_entity(request.scope, request.entity_id)
    restores = [_restore(request, item, context) for item in request.files]
    _require_distinct(restores)
    restores = _with_history(request, restores, context)
    storage, mode = context.storage, request.mode
    if mode is ImportMode.FAIL:
        existing = [r for r in restores if await storage.get(r.address.key)]
        if existing:
            raise import_conflict_error([_label(r) for r in existing])
    outcomes: dict[str, list[FileName]] = {outcome: [] for outcome in OUTCOMES}
    change = Change("memory.import", context.source, context.clock())
    try:
        for restore in restores:
            outcome = await _write(
                storage, restore, change, overwrite=mode is ImportMode.OVERWRITE
            )
            outcomes[outcome].append(_name(restore))
    finally:
        await context.index_cache.invalidate(prefix)
    return ImportReport(
        scope=request.scope,
        entity_id=request.entity_id,
        mode=mode,
        created=outcomes["created"],
        overwritten=outcomes["overwritten"],
        skipped=outcomes["skipped"],
    )


def _restore(
    request: ImportMemory, item: ImportedFile, context: AppContext
) -> _Restore:
    require_path(item.area, item.name)
    location = Location(request.scope, require_area(item.area), require_name(item.name))
    address = address_of(location, request.entity_id)
    data = require_within_limit(
        address, item.content.encode(), context.limits.max_file_bytes
    )
    require_metadata_budget(item.description, item.aliases)
    metadata = FileMetadata(
        description=require_description(item.description) or "",
        aliases=tuple(item.aliases),
        sources=tuple(sorted(set(item.sources or [context.source]))),
        last_updated=(item.last_updated or context.clock()).astimezone(UTC),
    )
    return _Restore(address, data, metadata)


def _require_distinct(restores: Sequence[_Restore]) -> None:
    seen: set[str] = set()
    for restore in restores:
        if restore.address.key in seen:
            raise invalid_argument_error(
                "files", f"{_label(restore)} appears twice; list each file once"
            )
        seen.add(restore.address.key)


async def _write(
    storage: Storage, restore: _Restore, change: Change, *, overwrite: bool
) -> str:
    """One of OUTCOMES; every write is guarded by the version just read."""
    key, data, metadata = restore.address.key, restore.data, restore.metadata
    for _ in range(ATTEMPTS):
        current = await storage.get(key)
        if current is not None and not overwrite:
            return "skipped"
        expected = None if current is None else current.version
        if current is None and restore.history:
            expected = await _replay(storage, restore)
            last = restore.history[-1]
            if (last.data, last.metadata, last.deleted) == (data, metadata, False):
                return "created"
        written = await storage.put_if_version(
            Write(key, data, metadata, change=change), expected
        )
        if written is not None:
            return "created" if current is None else "overwritten"
    await raise_current_state(storage, restore.address)


def _with_history(
    request: ImportMemory, restores: list[_Restore], context: AppContext
) -> list[_Restore]:
    """Each restore with its records, oldest first; a history needs its file."""
    by_name = {(r.address.location.area, r.address.location.name): r for r in restores}
    for item in request.history or ():
        restore = by_name.get((item.area, item.name))
        if restore is None:
            raise invalid_argument_error(
                "history", f"{item.area}/{item.name} has history but is not in files"
            )
        records = tuple(
            _record(restore.address, record, context)
            for record in reversed(item.records)
        )
        by_name[(item.area, item.name)] = replace(restore, history=records)
    return list(by_name.values())


def _record(address: Address, record: ExportedRecord, context: AppContext) -> _Record:
    data = require_within_limit(
        address, record.content.encode(), context.limits.max_file_bytes
    )
    require_metadata_budget(record.description, record.aliases)
    at = record.at.astimezone(UTC)
    metadata = FileMetadata(
        description=require_description(record.description) or "",
        aliases=tuple(record.aliases),
        sources=tuple(sorted(set(record.sources))),
        last_updated=at,
    )
    change = Change(record.operation, record.actor, at)
    return _Record(change, data, metadata, record.deleted)


async def _replay(storage: Storage, restore: _Restore) -> str | None:
    """Write the records again, oldest first; the version the last one left."""
    key, version = restore.address.key, None
    for record in restore.history:
        if record.deleted:
            if version is not None:
                await storage.delete_if_version(key, version, change=record.change)
            version = None
            continue
        version = await storage.put_if_version(
            Write(key, record.data, record.metadata, change=record.change), version
        )
        if version is None:
            await raise_current_state(storage, restore.address)
    return version


def _name(restore: _Restore) -> FileName:
    location = restore.address.location
    return FileName(area=location.area, name=location.name)


def _label(restore: _Restore) -> str:
    return f"{restore.address.location.area}/{restore.address.location.name}"
