from app.server.context import AppContext
from app.shared.identity import require_identity

from ..policy import locate_file, require_restorable, require_text, require_writable
from ..ports.storage_reads import load_version
from ..schemas import MemoryFile, RestoreVersion, WriteFile
from .write_file import write_as


async def restore_version(request: RestoreVersion, context: AppContext) -> MemoryFile:
    """Write an earlier version's content, description and aliases as a new version.

    write_file's rules; ``expected_version`` is the current version (None while
    the file is deleted); sources gain the restored version's and the restorer's.
    """
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    require_writable(identity, context.policy, address)
    version = require_text("version", request.version)
    record = await load_version(context.storage, address, version)
    content = require_restorable(record, version)
    rewrite = WriteFile(
        scope=request.scope,
        area=request.area,
        name=request.name,
        content=content.decode(),
        description=record.metadata.description,
        aliases=list(record.metadata.aliases),
        expected_version=request.expected_version,
    )
    sources = record.metadata.sources
    return await write_as(
        rewrite, context, operation="restore_version", sources=sources
    )
