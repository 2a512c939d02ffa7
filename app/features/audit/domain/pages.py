"""What a caller reads of the log: pages, cursors bound to a query, events as shown."""

from collections.abc import Sequence

from ...memory.domain import decode_cursor, encode_cursor, format_timestamp
from ..ports import AuditEvent, AuditPage, AuditSelection, Position, Subject
from ..schemas import AuditEvents, AuditEventView, AuditFilters
from .marks import parse_stamp, stamp


def selection_of(
    subjects: Sequence[Subject],
    filters: AuditFilters,
    *,
    area: str | None = None,
    name: str | None = None,
) -> AuditSelection:
    """The events of ``subjects`` that ``filters`` (and area/name) select."""
    return AuditSelection(
        subjects=tuple(subjects),
        since=filters.since,
        until=filters.until,
        operation=filters.operation,
        area=area,
        name=name,
    )


def rendered_page(
    page: AuditPage, key: bytes, selection: AuditSelection
) -> AuditEvents:
    """A page as the caller reads it, its cursor bound to ``selection``."""
    position = page.next_position
    return AuditEvents(
        events=[render_event(event) for event in page.events],
        next_cursor=None
        if position is None
        else encode_position(key, selection, position),
    )


def _listing(selection: AuditSelection) -> str:
    """What a cursor is bound to: the caller's subjects and every filter."""
    parts = [f"{s.scope}\0{s.entity_id}" for s in selection.subjects]
    bounds = (selection.since, selection.until)
    parts += [stamp(b) if b is not None else "" for b in bounds]
    parts += [selection.operation or "", selection.area or "", selection.name or ""]
    return "audit\0" + "\0".join(parts)


def page_of(found: Sequence[AuditEvent], limit: int) -> AuditPage:
    """The first ``limit`` of ``found`` (in page order); when ``found`` holds
    more (a store asks for ``limit + 1``), the next page starts after the last."""
    shown = found[:limit]
    if len(found) <= limit:
        return AuditPage(events=shown, next_position=None)
    last = shown[-1]
    return AuditPage(events=shown, next_position=Position(at=last.at, id=last.id))


def encode_position(key: bytes, selection: AuditSelection, position: Position) -> str:
    return encode_cursor(
        key, _listing(selection), f"{stamp(position.at)}|{position.id}"
    )


def decode_position(
    key: bytes, selection: AuditSelection, cursor: str
) -> Position | None:
    """The position in ``cursor`` if it was issued for ``selection``, else None."""
    decoded = decode_cursor(key, _listing(selection), cursor)
    if decoded is None:
        return None
    at, _, event_id = decoded.partition("|")
    return Position(at=parse_stamp(at), id=event_id)


def render_event(event: AuditEvent) -> AuditEventView:
    """What a caller sees of an event: everything but the entity id."""
    return AuditEventView(
        at=format_timestamp(event.at),
        request_id=event.request_id,
        surface=event.surface,
        actor=event.actor,
        token_id=event.token_id,
        operation=event.operation,
        scope=event.scope,
        area=event.area,
        name=event.name,
        outcome=event.outcome,
        version=event.version,
        files=list(event.files),
        files_omitted=event.files_omitted,
    )
