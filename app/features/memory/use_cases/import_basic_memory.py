"""import_basic_memory: basic-memory markdown notes, a file a note."""

from app.server.context import AppContext

from ..domain.basic_memory import parse_basic_memory
from ..policy import locate_entity
from ..policy.foreign_imports import checked_notes, read_notes
from ..ports import Change
from ..ports.note_imports import import_notes
from ..ports.source_files import read_note_tree
from ..schemas import ForeignImportReport, ImportBasicMemory


async def import_basic_memory(
    request: ImportBasicMemory, context: AppContext
) -> ForeignImportReport:
    """Each ``.md`` note at or under ``path`` as a file of ``area``.

    Every note is checked before anything is written: a malformed one is
    InvalidArgumentError(path) naming its line. A file already holding what
    the import would write is left alone, so a re-run changes nothing.
    Progress: bars ``check_basic_memory`` then ``import_basic_memory``.
    """
    prefix = locate_entity(request.scope, request.entity_id)
    notes = read_notes(parse_basic_memory, await read_note_tree(request.path))
    now, source = context.clock(), context.source
    restores = checked_notes(request, notes, context.limits, source=source, now=now)
    change = Change("memory.import_basic_memory", source, now)
    try:
        outcomes = await import_notes(
            context.storage, restores, change, request, context.progress
        )
    finally:
        await context.index_cache.invalidate(prefix)
    return outcomes.report(request)
