from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.expiry import Expiry
from ..policy import locate_file, require_text, require_writable
from ..ports import Change, VersionRecord
from ..ports.own_writes import recognising_own_write
from ..ports.storage_reads import load_existing, raise_current_state, require_version
from ..schemas import Deleted, DeleteFile


async def delete_file(request: DeleteFile, context: AppContext) -> Deleted:
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    require_writable(identity, context.policy, address)
    expected = require_text("expected_version", request.expected_version)
    storage, call = context.storage, context.call_key

    async def attempt() -> Deleted:
        stored = await load_existing(storage, address, now=Expiry(context.clock))
        require_version(address, stored, expected)
        at, event = context.clock(), context.audit_event
        change = Change("delete_file", context.source, at, call, event)
        if not await storage.delete_if_version(address.key, expected, change=change):
            await raise_current_state(storage, address, now=Expiry(context.clock))
        return Deleted()

    def own(record: VersionRecord) -> Deleted | None:
        return Deleted() if record.deleted else None  # only a tombstone is its own

    deleted = await recognising_own_write(storage, address, call, attempt, own)
    await context.index_cache.invalidate(address.entity_prefix, after_write=True)
    return deleted
