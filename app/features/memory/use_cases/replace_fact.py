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
from ..ports.storage_reads import edit_existing, load_existing
from ..schemas import MemoryFile, ReplaceFact

ATTEMPTS = 3


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

    def replace(stored: StoredObject) -> Write:
        content = stored.data.decode()
        matches = count_matches(content, old_string)
        if matches != 1 and stored.version == expected:
            raise replace_fact_match_error(location, content, stored.version, matches)
        if matches != 1:
            raise version_conflict_error(location, content, stored.version)
        edited = content.replace(old_string, new_string, 1)
        meta = edited_metadata(stored.metadata, request, source, context.clock())
        data = require_edit_fits(address, edited, meta, limit)
        change = Change("replace_fact", source, meta.last_updated)
        return Write(address.key, data, meta, change=change)

    for _ in range(ATTEMPTS):
        write, version = await edit_existing(storage, address, replace)
        if version is not None:
            await context.index_cache.invalidate(address.entity_prefix)
            return render_file(location, write.data, write.metadata, version)
    stored = await load_existing(storage, address)
    raise version_conflict_error(location, stored.data.decode(), stored.version)
