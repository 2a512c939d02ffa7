from collections.abc import Callable
from functools import partial

from tenchi.errors import AppError

from app.server.context import AppContext
from app.shared.errors import replace_fact_match_error, version_conflict_error
from app.shared.identity import require_identity

from ..domain import Address, count_matches, edited_metadata, render_file, render_record
from ..policy import locate_file, require_text, require_writable
from ..policy.content import (
    require_edit_fits,
    require_metadata_changes,
    require_old_string,
)
from ..ports import Change, StoredObject, Write
from ..ports.own_writes import recognises, recognising_own_write
from ..ports.storage_reads import edit_existing, raise_current_state, require_version
from ..schemas import MemoryFile, ReplaceFact

ATTEMPTS = 3


type Edit = Callable[[StoredObject, bool], Write]
"""The edit of the file as stored; True: forgive a stale expected version."""


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
    location, source = address.location, context.source
    limit, call = context.limits.max_file_bytes, context.call_key

    def replace(stored: StoredObject, forgive: bool) -> Write:
        if not forgive:
            require_version(address, stored, expected)
        content = stored.data.decode()
        matches = count_matches(content, old_string)
        if matches != 1 and stored.version == expected:
            raise replace_fact_match_error(location, content, stored.version, matches)
        if matches != 1:
            raise version_conflict_error(location, content, stored.version)
        edited = content.replace(old_string, new_string, 1)
        meta = edited_metadata(stored.metadata, request, source, context.clock())
        data = require_edit_fits(address, edited, meta, limit)
        change = Change("replace_fact", source, meta.last_updated, call)
        return Write(address.key, data, meta, change=change)

    file = await _written(context, address, replace)
    if file is None:  # every attempt lost its race
        await raise_current_state(context.storage, address)
    await context.index_cache.invalidate(address.entity_prefix)
    return file


async def _written(
    context: AppContext, address: Address, replace: Edit
) -> MemoryFile | None:
    """``replace`` written, re-applied on newer content up to ATTEMPTS times.

    A call that may be repeating its own landed write first edits without
    forgiving a stale version: a conflict then looks for that write.
    """
    storage, call, attempts = context.storage, context.call_key, ATTEMPTS

    async def attempt(*, forgive: bool) -> MemoryFile | None:
        nonlocal attempts

        def edit(stored: StoredObject) -> Write:
            return replace(stored, forgive)

        write, version = await edit_existing(storage, address, edit)
        attempts -= 1  # a stale version refused before writing was no attempt
        if version is None:
            return None
        return render_file(address.location, write.data, write.metadata, version)

    async def unforgiving() -> MemoryFile:
        file = await attempt(forgive=False)
        if file is None:  # beaten, maybe by this call's own earlier attempt
            await raise_current_state(storage, address)
        return file

    file: MemoryFile | None = None
    if recognises(storage, call):
        own = partial(render_record, address.location)
        try:
            file = await recognising_own_write(storage, address, call, unforgiving, own)
        except AppError as error:
            if error.code != "VERSION_CONFLICT":
                raise
    while file is None and attempts:
        file = await attempt(forgive=True)
    return file
