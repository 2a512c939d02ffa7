"""What one operation call becomes in the audit log: pure rules, no I/O.

A call is recorded once for each scope whose memory it touched: a call that
names a scope (every file operation, a listing, a task) gives one event; a
call over all the caller's scopes (the index, a search without a scope) gives
one event per granted scope, holding the files that scope served, so each
owner sees what was shown from their memory and a purge of one entity erases
exactly its part. Events never hold content, only ``area/name`` of what an
index, listing or search returned, at most ``MAX_FILES`` of them.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import cast

from pydantic import BaseModel

from app.shared.identity import Grant

from ..ports import AuditEvent
from .fields import as_text, field_of, model_has, read_fields
from .marks import new_event_id

MAX_FILES = 1000
PURGE = "memory.purge"
"""The one operation whose event an erasure of its entity never drops."""
INTERNAL = "INTERNAL_SERVER_ERROR"
"""The outcome of a call that failed with an unexpected error."""


@dataclass(slots=True)  # not frozen: built per call, see AuditEvent
class Call:
    """Who made a call, through which surface, and what it was."""

    operation: str
    surface: str
    actor: str
    token_id: str | None
    request_id: str
    grants: Mapping[str, Grant]


_LISTINGS = ("entries", "hits")
"""Where results list what they served: listings and the index answer
``entries``, search answers ``hits``."""


def _listing_names(model: type[BaseModel]) -> list[str]:
    # Listings hold their entries in fields: a field lookup answers, where
    # asking the class for a name it lacks raises inside pydantic (every read).
    # A list comprehension runs inline; tuple() of a generator costs a frame
    # and a step per name (half of this function's ~1.3 us, on every read).
    fields = model.model_fields
    return [name for name in _LISTINGS if name in fields]


def _listed(result: object) -> object:
    if isinstance(result, BaseModel):
        # Asking a pydantic model for an attribute it lacks raises inside it,
        # and a file result lacks both: look only where this model lists entries.
        for name in _listing_names(type(result)):
            value = getattr(result, name)
            if value:
                return value
        return None
    return getattr(result, "entries", None) or getattr(result, "hits", None)


def _may_name(kind: type) -> bool:
    """False for a model without scope, area and name (a version entry)."""
    fields = ("scope", "area", "name")
    return not issubclass(kind, BaseModel) or all(model_has(kind, f) for f in fields)


def served_files(result: object) -> dict[str, list[str]]:
    """``area/name`` of each entry a listing-shaped result returned, by scope."""
    entries = _listed(result)
    served: dict[str, list[str]] = {}
    if not isinstance(entries, list):
        return served
    # One plain loop: an index lists hundreds of entries, each paid for here.
    for entry in cast(list[object], entries):
        if not _may_name(type(entry)):
            continue
        scope, area = getattr(entry, "scope", None), getattr(entry, "area", None)
        name = getattr(entry, "name", None)
        if isinstance(scope, str) and isinstance(area, str) and isinstance(name, str):
            files = served.get(scope)
            if files is None:
                served[scope] = files = []
            files.append(f"{area}/{name}")
    return served


def _version(expected: str | None, result: object) -> str | None:
    written = as_text(getattr(result, "version", None))
    if written is not None or result is None:
        return written
    # A delete answers {"ok": true}: the version it removed is the one it named.
    return expected


def call_scope(request: object) -> str | None:
    """The one scope a call names, or None for a call over every granted scope."""
    return field_of(request, "scope")


def _scopes(
    call: Call, scope: str | None, named_entity: str | None
) -> list[tuple[str | None, str | None]]:
    """(scope, entity) pairs the call touched; the entity is None if ungranted."""
    if scope is not None:
        return [(scope, _entity(call, scope, named_entity))]
    if not call.grants:
        return [(None, None)]
    return [(name, grant.entity_id) for name, grant in sorted(call.grants.items())]


def _entity(call: Call, scope: str, named_entity: str | None) -> str | None:
    grant = call.grants.get(scope)
    return named_entity or (grant.entity_id if grant else None)


def event_count(call: Call, scope: str | None) -> int:
    """How many events the call makes: ``len(_scopes(...))``, none built."""
    return 1 if scope is not None or not call.grants else len(call.grants)


@dataclass(slots=True)  # not frozen: every call builds one, see AuditEvent
class Outcome:
    """How a call ended: ``ok`` with its result, or an error code."""

    code: str
    result: object | None = None


def call_events(
    call: Call,
    request: object,
    outcome: Outcome,
    *,
    at: datetime,
    made_ns: int | None = None,
) -> list[AuditEvent]:
    """The events of one call, one per scope it touched.

    ``made_ns`` is when the call's events were made, for their ids (else now).
    """
    fields = read_fields(request)
    version, served = result_parts(fields, outcome)
    return events_of(
        call, fields, outcome.code, version, served, at=at, made_ns=made_ns
    )


_NONE_SERVED: Mapping[str, list[str]] = MappingProxyType({})
"""What a result that lists nothing served (shared, so read-only)."""

FILES_SERVED = "files_served"
"""A result may say what it served itself: ``area/name`` by scope, in the order
served (the index, counted while it was built: no walk of its entries)."""


def _says_served(kind: type) -> bool:
    return isinstance(getattr(kind, FILES_SERVED, None), property)


def result_parts(
    fields: Mapping[str, str | None],
    outcome: Outcome,
) -> tuple[str | None, Mapping[str, list[str]]]:
    """The version and the files by scope a call's events say it gave."""
    if outcome.code != "ok":
        return None, _NONE_SERVED
    result = outcome.result
    version = _version(fields["expected_version"], result)
    if isinstance(result, BaseModel) and not _listing_names(type(result)):
        return version, _NONE_SERVED  # a file result: most reads end here
    if _says_served(type(result)):
        served: Mapping[str, list[str]] = getattr(result, FILES_SERVED)
        return version, served
    return version, served_files(result)


def events_of(
    call: Call,
    fields: Mapping[str, str | None],
    code: str,
    version: str | None,
    served: Mapping[str, list[str]],
    *,
    at: datetime,
    made_ns: int | None,
) -> list[AuditEvent]:
    area, name = fields["area"], fields["name"]
    return [
        _event(
            call,
            at,
            scope,
            entity,
            area,
            name,
            code,
            version,
            made_ns,
            served.get(scope or "") or (),
        )
        for scope, entity in _scopes(call, fields["scope"], fields["entity_id"])
    ]


def ok_event(call: Call, request: object, *, at: datetime) -> AuditEvent | None:
    """``call_events(call, request, Outcome("ok"), at=at)`` of a call naming one
    scope, or None for a call naming none: a mutation's event before its write
    (no result yet, so no version and no files; the write stamps the version).

    Without the result-reading steps, nor a list for its one scope: every
    write builds one as its statement is prepared.
    """
    fields = read_fields(request)
    scope = fields["scope"]
    if scope is None:
        return None
    entity = _entity(call, scope, fields["entity_id"])
    return _event(call, at, scope, entity, fields["area"], fields["name"], "ok", None)


def _event(
    call: Call,
    at: datetime,
    scope: str | None,
    entity: str | None,
    area: str | None,
    name: str | None,
    code: str,
    version: str | None,
    made_ns: int | None = None,
    files: Sequence[str] = (),
) -> AuditEvent:
    """One event of ``call``, listing at most ``MAX_FILES`` of ``files``."""
    # Positional, in AuditEvent's field order: an index's flush builds one per scope.
    return AuditEvent(
        new_event_id(made_ns),
        at,
        call.request_id,
        call.surface,
        call.actor,
        call.token_id,
        call.operation,
        scope,
        entity,
        area,
        name,
        code,
        version,
        tuple(files[:MAX_FILES]),
        max(0, len(files) - MAX_FILES),
    )
