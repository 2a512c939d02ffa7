from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.history import render_file_version
from ..policy import locate_file, require_text
from ..ports.storage_reads import load_version
from ..schemas import FileVersion, ReadVersion


async def read_version(request: ReadVersion, context: AppContext) -> FileVersion:
    """One version record with the file as it stood (a tombstone has no content)."""
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    version = require_text("version", request.version)
    record = await load_version(context.storage, address, version)
    return render_file_version(address.location, record)
