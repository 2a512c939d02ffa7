from app.server.context import AppContext
from app.shared import errors
from app.shared.identity import require_identity

from ..domain import render_stored
from ..domain.expiry import Expiry
from ..policy import locate_file, require_text, require_writable
from ..ports import Change
from ..ports.renames import RENAME, rename_existing
from ..schemas import MemoryFile, RenameFile


async def rename_file(request: RenameFile, context: AppContext) -> MemoryFile:
    """Move a file to another area or name in its scope, with its history.

    Content, description, aliases and expiry move unchanged under a new
    version; a file already at the new path is a VERSION_CONFLICT naming it.
    """
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    target = locate_file(identity, request.scope, request.new_area, request.new_name)
    require_writable(identity, context.policy, address)
    require_writable(identity, context.policy, target)
    expected = require_text("expected_version", request.expected_version)
    if target.key == address.key:
        raise errors.invalid_argument_error(
            "new_name", "The new path is the file's own path."
        )
    at, call, event = context.clock(), context.call_key, context.audit_event
    change = Change(RENAME, context.source, at, call, event)
    now = Expiry(context.clock)
    stored = await rename_existing(
        context.storage, address, target, expected, change, now=now
    )
    await context.index_cache.invalidate(address.entity_prefix, after_write=True)
    return render_stored(target.location, stored)
