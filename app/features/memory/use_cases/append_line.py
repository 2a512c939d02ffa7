from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import appended, edited_metadata, render_stored
from ..domain.expiry import Expiry
from ..policy import locate_file, require_text, require_writable
from ..policy.content import (
    require_edit_fits,
    require_fact_line,
    require_metadata_changes,
)
from ..ports import Change, StoredObject, Write
from ..ports.storage_reads import edit_existing, require_version
from ..schemas import AppendLine, MemoryFile


async def append_line(request: AppendLine, context: AppContext) -> MemoryFile:
    """Append one fact line to an existing file, guarded by its version.

    When the write's precondition fails but storage holds exactly what this
    call wrote (its own landed retry), the call succeeds instead of conflicting.
    """
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    require_writable(identity, context.policy, address)
    line = require_fact_line(request.line)
    expected = require_text("expected_version", request.expected_version)
    require_metadata_changes(request)
    call, event = context.call_key, context.audit_event
    storage, source, limit = (
        context.storage,
        context.source,
        context.limits.max_file_bytes,
    )

    def append(stored: StoredObject) -> Write:
        require_version(address, stored, expected)
        content = appended(stored.data.decode(), line)
        meta = edited_metadata(stored.metadata, request, source, context.clock())
        data = require_edit_fits(address, content, meta, limit, request)
        change = Change("append_line", source, meta.last_updated, call, event)
        return Write(address.key, data, meta, change=change)

    now = Expiry(context.clock)
    stored = await edit_existing(storage, address, append, call=call, now=now)
    await context.index_cache.invalidate(address.entity_prefix, after_write=True)
    return render_stored(address.location, stored)
