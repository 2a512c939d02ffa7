"""What an import may restore: each file and record checked before any write."""

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from app.shared.errors import invalid_argument_error
from app.shared.locations import Location

from ..domain import Address, address_of
from ..ports import Change, FileMetadata
from ..ports.import_writes import Record, Restore
from ..schemas import EntityPrefix, ExportedRecord, ImportedFile, ImportMemory
from . import require_area, require_name, require_path
from .content import require_description, require_metadata_budget, require_within_limit


def checked_restores(
    request: ImportMemory, *, max_file_bytes: int, source: str, now: datetime
) -> list[Restore]:
    """Every file of ``request`` checked, listed once, with its history.

    A file without sources is recorded as written by ``source``, one without
    last_updated at ``now``.
    """
    restores = [
        checked_restore(
            request,
            item,
            max_file_bytes=max_file_bytes,
            source=source,
            now=now,
        )
        for item in request.files
    ]
    _require_distinct(restores)
    return _with_history(request, restores, max_file_bytes)


def checked_restore(
    entity: EntityPrefix,
    item: ImportedFile,
    *,
    max_file_bytes: int,
    source: str,
    now: datetime,
) -> Restore:
    """One file to restore into ``entity``, checked as a write of it would be."""
    require_path(item.area, item.name)
    location = Location(entity.scope, require_area(item.area), require_name(item.name))
    address = address_of(location, entity.entity_id)
    data = require_within_limit(address, item.content.encode(), max_file_bytes)
    require_metadata_budget(item.description, item.aliases)
    metadata = FileMetadata(
        description=require_description(item.description) or "",
        aliases=tuple(item.aliases),
        sources=tuple(sorted(set(item.sources or [source]))),
        last_updated=(item.last_updated or now).astimezone(UTC),
        expires_at=None if item.expires_at is None else item.expires_at.astimezone(UTC),
    )
    return Restore(address, data, metadata)


def _require_distinct(restores: Sequence[Restore]) -> None:
    seen: set[str] = set()
    for restore in restores:
        if restore.address.key in seen:
            raise invalid_argument_error(
                "files", f"{restore.label} appears twice; list each file once"
            )
        seen.add(restore.address.key)


def _with_history(
    request: ImportMemory, restores: list[Restore], max_file_bytes: int
) -> list[Restore]:
    """Each restore with its records, oldest first; a history needs its file."""
    by_name = {(r.address.location.area, r.address.location.name): r for r in restores}
    for item in request.history or ():
        restore = by_name.get((item.area, item.name))
        if restore is None:
            raise invalid_argument_error(
                "history", f"{item.area}/{item.name} has history but is not in files"
            )
        records = tuple(
            _record(restore.address, record, max_file_bytes)
            for record in reversed(item.records)
        )
        by_name[(item.area, item.name)] = replace(restore, history=records)
    return list(by_name.values())


def _record(address: Address, record: ExportedRecord, max_file_bytes: int) -> Record:
    data = require_within_limit(address, record.content.encode(), max_file_bytes)
    require_metadata_budget(record.description, record.aliases)
    at = record.at.astimezone(UTC)
    metadata = FileMetadata(
        description=require_description(record.description) or "",
        aliases=tuple(record.aliases),
        sources=tuple(sorted(set(record.sources))),
        last_updated=at,
    )
    return Record(
        Change(record.operation, record.actor, at), data, metadata, record.deleted
    )
