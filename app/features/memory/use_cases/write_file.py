from datetime import datetime
from functools import partial

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import render_file, render_record, with_source
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
from ..ports.own_writes import recognising_own_write
from ..ports.quota import require_room
from ..ports.storage_reads import (
    create_new,
    edit_existing,
    raise_current_state,
    require_version,
)
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

    async def attempt() -> MemoryFile:
        if expected is None:
            await require_room(storage, address, context.limits.max_files_per_entity)
            write = written(sources)
            version = await create_new(storage, address, write, now=now)
            return render_file(address.location, data, write.metadata, version)
        current: str = expected

        def replace(stored: StoredObject) -> Write:
            require_version(address, stored, current)
            held = (*stored.metadata.sources, *sources)
            return written(held, stored.metadata.expires_at)

        write, landed = await edit_existing(storage, address, replace, now=now)
        if landed is None:
            await raise_current_state(storage, address, now=now)
        return render_file(address.location, data, write.metadata, landed)

    own = partial(render_record, address.location)
    file = await recognising_own_write(storage, address, context.call_key, attempt, own)
    await context.index_cache.invalidate(address.entity_prefix, after_write=True)
    return file
