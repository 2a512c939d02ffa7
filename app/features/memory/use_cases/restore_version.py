from app.server.context import AppContext
from app.shared.errors import invalid_argument_error
from app.shared.identity import require_identity

from ..policy import locate_file, require_text, require_writable
from ..ports.storage_reads import load_version
from ..schemas import MemoryFile, RestoreVersion, WriteFile
from .write_file import write_as


async def restore_version(request: RestoreVersion, context: AppContext) -> MemoryFile:
    """Write an earlier version's content, description and aliases as a new version.

    The write follows write_file's rules; ``expected_version`` is the current
    version, or None while the file is deleted (then this re-creates it).
    Sources grow: the current ones, the restored version's and the restorer's.
    """
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    require_writable(identity, context.policy, address)
    version = require_text("version", request.version)
    record = await load_version(context.storage, address, version)
    if record.deleted or record.data is None:
        raise invalid_argument_error(
            "version",
            f"version {version} is the record of a delete and has no content; "
            "restore a version listed before it",
        )
    rewrite = WriteFile(
        scope=request.scope,
        area=request.area,
        name=request.name,
        content=record.data.decode(),
        description=record.metadata.description,
        aliases=list(record.metadata.aliases),
        expected_version=request.expected_version,
    )
    return await write_as(
        rewrite,
        context,
        operation="restore_version",
        sources=record.metadata.sources,
    )
