"""import_memory: an export restored into one entity, content and metadata as given."""

from app.server.context import AppContext
from app.shared.errors import import_conflict_error

from ..policy import locate_entity
from ..policy.imports import checked_restores
from ..ports import Change
from ..ports.import_writes import write_restore
from ..schemas import FileName, ImportMemory, ImportMode, ImportReport


async def import_memory(request: ImportMemory, context: AppContext) -> ImportReport:
    """Restore an export into one entity: content and metadata exactly as given.

    Every file is checked before anything is written; mode fail writes nothing
    when any file exists. Versions are always new. A file without sources is
    recorded as written by this surface (``task``), one without last_updated at
    the clock's time.
    """
    prefix = locate_entity(request.scope, request.entity_id)
    restores = checked_restores(
        request,
        max_file_bytes=context.limits.max_file_bytes,
        source=context.source,
        now=context.clock(),
    )
    storage, mode = context.storage, request.mode
    if mode is ImportMode.FAIL:
        existing = [r.label for r in restores if await storage.get(r.address.key)]
        if existing:
            raise import_conflict_error(existing)
    outcomes: dict[str, list[FileName]] = {
        "created": [],
        "overwritten": [],
        "skipped": [],
    }
    change = Change("memory.import", context.source, context.clock())
    overwrite = mode is ImportMode.OVERWRITE
    try:
        for restore in restores:
            outcome = await write_restore(storage, restore, change, overwrite=overwrite)
            where = restore.address.location
            outcomes[outcome].append(FileName(area=where.area, name=where.name))
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
