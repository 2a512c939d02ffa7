from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import render_stored
from ..policy import locate_file
from ..ports.storage_reads import load_existing
from ..schemas import MemoryFile, ReadFile


async def read_file(request: ReadFile, context: AppContext) -> MemoryFile:
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    stored = await load_existing(context.storage, address)
    return render_stored(address.location, stored)
