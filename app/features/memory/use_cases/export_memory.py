from app.server.context import AppContext

from ..domain import format_timestamp, split_key
from ..policy import locate_entity
from ..ports.storage_reads import list_batches
from ..schemas import EntityPrefix, ExportedFile, MemoryExport


async def export_memory(request: EntityPrefix, context: AppContext) -> MemoryExport:
    """Every file under one entity prefix, bodies and metadata as stored.

    Storage is read one list batch at a time and each body with its own
    ``get`` (body, metadata and version commit together), so no listing of the
    whole entity is held beside the document. The export is not a snapshot: a
    file deleted mid-export is left out.
    """
    storage = context.storage
    files: list[ExportedFile] = []
    prefix = locate_entity(request.scope, request.entity_id)
    async for batch in list_batches(storage, prefix):
        for listed in batch:
            parts = split_key(listed.key)
            stored = await storage.get(listed.key)
            if parts is None or stored is None:
                continue
            meta = stored.metadata
            files.append(
                ExportedFile(
                    area=parts[1],
                    name=parts[2],
                    content=stored.data.decode(),
                    description=meta.description,
                    aliases=list(meta.aliases),
                    sources=list(meta.sources),
                    last_updated=format_timestamp(meta.last_updated),
                    version=stored.version,
                )
            )
    return MemoryExport(scope=request.scope, entity_id=request.entity_id, files=files)
