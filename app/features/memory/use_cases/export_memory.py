from collections.abc import AsyncIterator

from app.server.context import AppContext

from ..domain.exports import exported_file, exported_record
from ..domain.keys import split_key
from ..policy import locate_entity
from ..ports import Storage, VersionRecord
from ..ports.storage_reads import list_batches
from ..schemas import ExportedFile, ExportMemory, FileHistory, MemoryExport

HISTORY_PAGE = 1000


async def export_memory(request: ExportMemory, context: AppContext) -> MemoryExport:
    """Every file under one entity prefix, bodies and metadata as stored.

    Storage is read one list batch at a time and each body with its own
    ``get`` (body, metadata and version commit together), so no listing of the
    whole entity is held beside the document. The export is not a snapshot: a
    file deleted mid-export is left out. With ``include_history`` each exported
    file's version records follow, newest first (the history of files deleted
    before the export is not included).
    """
    storage = context.storage
    files: list[ExportedFile] = []
    history: list[FileHistory] | None = [] if request.include_history else None
    prefix = locate_entity(request.scope, request.entity_id)
    async for batch in list_batches(storage, prefix):
        for listed in batch:
            parts = split_key(listed.key)
            stored = await storage.get(listed.key)
            if parts is None or stored is None:
                continue
            files.append(exported_file(parts[1], parts[2], stored))
            if history is not None:
                versions = _stored_versions(storage, listed.key)
                records = [exported_record(record) async for record in versions]
                history.append(
                    FileHistory(area=parts[1], name=parts[2], records=records)
                )
    return MemoryExport(
        scope=request.scope, entity_id=request.entity_id, files=files, history=history
    )


async def _stored_versions(storage: Storage, key: str) -> AsyncIterator[VersionRecord]:
    """Every version record of ``key`` with its content, newest first."""
    after: str | None = None
    while True:
        page = await storage.list_versions(key, after=after, limit=HISTORY_PAGE)
        for entry in page:
            record = await storage.get_version(key, entry.version)
            if record is not None:
                yield record
        if len(page) < HISTORY_PAGE:
            return
        after = page[-1].version
