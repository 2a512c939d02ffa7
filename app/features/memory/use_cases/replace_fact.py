from functools import partial
from typing import Protocol

from tenchi.errors import AppError

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import Address, edited_metadata, render_stored
from ..domain.expiry import Expiry
from ..policy import locate_file, require_text, require_writable
from ..policy.content import (
    require_edit_fits,
    require_metadata_changes,
    require_old_string,
    require_single_match,
)
from ..ports import Change, StoredObject, Write
from ..ports.storage_reads import raise_current_state, require_version, try_edit
from ..schemas import MemoryFile, ReplaceFact

ATTEMPTS = 3
"""Writes tried before a lost race is reported; a refusal before writing is none."""


class Edit(Protocol):
    """The edit of the file as stored; ``forgive``: forgive a stale expected version."""

    def __call__(self, stored: StoredObject, *, forgive: bool) -> Write: ...


async def replace_fact(request: ReplaceFact, context: AppContext) -> MemoryFile:
    """Replace the one span equal to old_string.

    A stale expected_version is forgiven while the match stays unique: the edit
    is re-applied on the current content (up to three attempts). A keyed call
    that may be repeating its own landed write first edits without forgiving:
    a conflict then looks for that write before forgiving.
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
    event = context.audit_event

    def replace(stored: StoredObject, *, forgive: bool) -> Write:
        if not forgive:
            require_version(address, stored, expected)
        content = require_single_match(location, stored, old_string, expected)
        edited = content.replace(old_string, new_string, 1)
        meta = edited_metadata(stored.metadata, request, source, context.clock())
        data = require_edit_fits(address, edited, meta, limit, request)
        change = Change("replace_fact", source, meta.last_updated, call, event)
        return Write(address.key, data, meta, change=change)

    stored = await _written(context, address, replace)
    if stored is None:  # every attempt lost its race
        await raise_current_state(context.storage, address, now=Expiry(context.clock))
    await context.index_cache.invalidate(address.entity_prefix, after_write=True)
    return render_stored(location, stored)


async def _written(
    context: AppContext, address: Address, replace: Edit
) -> StoredObject | None:
    """``replace`` written, re-applied on newer content up to ATTEMPTS writes."""
    storage, call, now = context.storage, context.call_key, Expiry(context.clock)
    stored: StoredObject | None = None
    attempts, forgive = 0, not call  # a keyed call may be its own repeat
    while stored is None and attempts < ATTEMPTS:
        try:
            edit = partial(replace, forgive=forgive)
            # Only the unforgiving attempt may meet this call's own landed write.
            own_call = "" if forgive else call
            stored = await try_edit(storage, address, edit, call=own_call, now=now)
            attempts += 1  # the write was tried: it landed or lost a race
        except AppError as error:
            if forgive or error.code != "VERSION_CONFLICT":
                raise
        forgive = True
    return stored
