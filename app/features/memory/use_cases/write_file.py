from datetime import datetime

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import render_stored, with_source
from ..domain.expiry import Expiry, written_expiry
from ..policy import locate_file, require_utf8, require_writable
from ..policy.content import (
    asked_expiry,
    require_aliases,
    require_description,
    require_metadata_budget,
    require_within_limit,
)
from ..ports import Change, FileMetadata, StoredObject, Write
from ..ports.storage_reads import create_new, edit_existing, require_version
from ..schemas import MemoryFile, WriteFile


async def write_file(request: WriteFile, context: AppContext) -> MemoryFile:
    """Create (expected_version None) or replace a whole file.

    Description and aliases replace the stored ones; sources only ever grow.
    """
    return await write_as(request, context, operation="write_file")


async def write_as(
    request: WriteFile,
    context: AppContext,
    *,
    operation: str,
    sources: tuple[str, ...] = (),
) -> MemoryFile:
    """write_file's rules and write, recorded in history as ``operation``.

    ``sources`` join the writer's (a restore keeps the restored version's).
    """
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    require_writable(identity, context.policy, address)
    encoded = require_utf8("content", request.content)
    description = require_description(request.description) or ""
    aliases = require_aliases(request.aliases) or ()
    require_metadata_budget(description, aliases)
    data = require_within_limit(address, encoded, context.limits.max_file_bytes)
    expected = request.expected_version
    storage, source, now = context.storage, context.source, Expiry(context.clock)
    asked = asked_expiry(request)
    area_seconds = context.limits.area_ttl.get(address.location.area)

    def written(held: tuple[str, ...], kept: datetime | None = None) -> Write:
        stamp = context.clock()
        expires = written_expiry(asked, kept, now=stamp, area_seconds=area_seconds)
        meta = FileMetadata(
            description, aliases, with_source(held, source), stamp, expires
        )
        change = Change(
            operation, source, meta.last_updated, context.call_key, context.audit_event
        )
        return Write(address.key, data, meta, change=change)

    if expected is None:
        cap = context.limits.max_files_per_entity
        stored = await create_new(storage, address, written(sources), cap=cap, now=now)
    else:
        current: str = expected

        def replace(stored: StoredObject) -> Write:
            require_version(address, stored, current)
            held = (*stored.metadata.sources, *sources)
            return written(held, stored.metadata.expires_at)

        call = context.call_key
        stored = await edit_existing(storage, address, replace, call=call, now=now)
    await context.index_cache.invalidate(address.entity_prefix, after_write=True)
    return render_stored(address.location, stored)
