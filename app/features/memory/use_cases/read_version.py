from app.server.context import AppContext
from app.shared.errors import version_absent_error
from app.shared.identity import require_identity

from ..domain.history import render_file_version
from ..policy import locate_file, require_text
from ..schemas import FileVersion, ReadVersion


async def read_version(request: ReadVersion, context: AppContext) -> FileVersion:
    """One version record with the file as it stood (a tombstone has no content)."""
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    version = require_text("version", request.version)
    record = await context.storage.get_version(address.key, version)
    if record is None:
        raise version_absent_error(address.location, version)
    return render_file_version(address.location, record)
