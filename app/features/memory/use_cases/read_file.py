from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import render_stored
from ..policy import locate_file
from ..policy.expiry import hidden_after
from ..ports.storage_reads import load_existing
from ..schemas import MemoryFile, ReadFile


async def read_file(request: ReadFile, context: AppContext) -> MemoryFile:
    """The file; an expired one only to its scope's owners, when asked."""
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    now = hidden_after(identity, request.scope, request.include_expired, context.clock)
    stored = await load_existing(context.storage, address, now=now)
    return render_stored(address.location, stored)
