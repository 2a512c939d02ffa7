from app.server.context import AppContext
from app.shared.errors import replace_fact_match_error, version_conflict_error
from app.shared.identity import require_identity

from ..domain import count_matches, edited_metadata, render_file
from ..policy import locate_file, require_text, require_writable
from ..policy.content import (
    require_edit_fits,
    require_metadata_changes,
    require_old_string,
)
from ..ports import Change, StoredObject, Write
from ..ports.storage_reads import edit_existing, load_existing, own_write
from ..schemas import MemoryFile, ReplaceFact

ATTEMPTS = 3


class _Repeated(Exception):
    """A repeated call found the file moved on: it may have moved it itself."""


async def replace_fact(request: ReplaceFact, context: AppContext) -> MemoryFile:
    """Replace the one span equal to old_string.

    A stale expected_version is forgiven while the match stays unique: the edit
    is re-applied on the current content (up to three attempts).
    """
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    require_writable(identity, context.policy, address)
    old_string = require_old_string(request.old_string)
    new_string = require_text("new_string", request.new_string)
    expected = require_text("expected_version", request.expected_version)
    require_metadata_changes(request)
    storage, location, source = context.storage, address.location, context.source
    limit = context.limits.max_file_bytes

    unchecked = bool(context.call_key)

    def replace(stored: StoredObject) -> Write:
        if unchecked and stored.version != expected:
            raise _Repeated  # before forgiving a stale version, see who moved it
        content = stored.data.decode()
        matches = count_matches(content, old_string)
        if matches != 1 and stored.version == expected:
            raise replace_fact_match_error(location, content, stored.version, matches)
        if matches != 1:
            raise version_conflict_error(location, content, stored.version)
        edited = content.replace(old_string, new_string, 1)
        meta = edited_metadata(stored.metadata, request, source, context.clock())
        data = require_edit_fits(address, edited, meta, limit)
        change = Change("replace_fact", source, meta.last_updated, context.call_key)
        return Write(address.key, data, meta, change=change)

    attempts = ATTEMPTS
    while attempts:
        attempts -= 1
        try:
            write, version = await edit_existing(storage, address, replace)
        except _Repeated:
            own = await own_write(storage, address, context.call_key)
            if own is not None:  # its first attempt landed: never apply it twice
                await context.index_cache.invalidate(address.entity_prefix)
                data, meta = own.data or b"", own.metadata
                return render_file(location, data, meta, own.version)
            unchecked, attempts = False, attempts + 1  # that look was no attempt
            continue
        if version is not None:
            await context.index_cache.invalidate(address.entity_prefix)
            return render_file(location, write.data, write.metadata, version)
    stored = await load_existing(storage, address)
    raise version_conflict_error(location, stored.data.decode(), stored.version)
