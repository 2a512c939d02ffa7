from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.expiry import Expiry
from ..policy import locate_file, require_text, require_writable
from ..ports import Change
from ..ports.storage_reads import delete_existing
from ..schemas import Deleted, DeleteFile


async def delete_file(request: DeleteFile, context: AppContext) -> Deleted:
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    require_writable(identity, context.policy, address)
    expected = require_text("expected_version", request.expected_version)
    at, call, event = context.clock(), context.call_key, context.audit_event
    change = Change("delete_file", context.source, at, call, event)
    now = Expiry(context.clock)
    await delete_existing(context.storage, address, expected, change, now=now)
    await context.index_cache.invalidate(address.entity_prefix, after_write=True)
    return Deleted()
