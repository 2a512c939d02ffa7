"""import_mcp_memory: an MCP memory server's memory.json, one file per entity."""

from app.server.context import AppContext

from ..domain.mcp_memory import parse_mcp_memory
from ..policy import locate_entity
from ..policy.foreign_imports import checked_notes, read_notes
from ..ports import Change
from ..ports.note_imports import import_notes
from ..ports.source_files import read_source
from ..schemas import ForeignImportReport, ImportMcpMemory


async def import_mcp_memory(
    request: ImportMcpMemory, context: AppContext
) -> ForeignImportReport:
    """Each entity of the JSON Lines file at ``path`` as a file of ``area``.

    Every line is checked before anything is written: a malformed one is
    InvalidArgumentError(path) naming it. A file already holding what the
    import would write is left alone, so a re-run changes nothing.
    Progress: bars ``check_mcp_memory`` then ``import_mcp_memory``.
    """
    prefix = locate_entity(request.scope, request.entity_id)
    notes = read_notes(parse_mcp_memory, [await read_source(request.path)])
    now, source = context.clock(), context.source
    restores = checked_notes(request, notes, context.limits, source=source, now=now)
    change = Change("memory.import_mcp_memory", source, now)
    try:
        outcomes = await import_notes(
            context.storage, restores, change, request, context.progress
        )
    finally:
        await context.index_cache.invalidate(prefix)
    return outcomes.report(request)
