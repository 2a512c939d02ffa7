from app.server.context import AppContext
from app.shared.errors import invalid_argument_error
from app.shared.identity import require_identity

from ..domain.pages import decode_position, encode_position, render_event
from ..policy import audit_subjects
from ..ports import AuditSelection, Position, Subject
from ..schemas import PAGE_SIZE, AuditEvents, AuditFilters, ReadAudit


async def read_audit(request: ReadAudit, context: AppContext) -> AuditEvents:
    """Events on the caller's own entities, newest first, in scopes it may audit."""
    identity = require_identity(context.identity)
    subjects = audit_subjects(identity, request.scope, context.audit_policy)
    return await page_of_events(
        context, subjects, request, area=request.area, name=request.name
    )


async def page_of_events(
    context: AppContext,
    subjects: tuple[Subject, ...],
    filters: AuditFilters,
    *,
    area: str | None = None,
    name: str | None = None,
) -> AuditEvents:
    """One page of the subjects' events that ``filters`` (and area/name) select."""
    selection = AuditSelection(
        subjects=subjects,
        since=filters.since,
        until=filters.until,
        operation=filters.operation,
        area=area,
        name=name,
    )
    before: Position | None = None
    if filters.cursor:
        before = decode_position(context.cursor_key, selection, filters.cursor)
        if before is None:
            raise invalid_argument_error(
                "cursor",
                "cursor was not issued for these filters; pass the next_cursor "
                "returned with the same filters, or omit it to start over",
            )
    page = await context.audit.query(selection, before=before, limit=PAGE_SIZE)
    position = page.next_position
    return AuditEvents(
        events=[render_event(event) for event in page.events],
        next_cursor=None
        if position is None
        else encode_position(context.cursor_key, selection, position),
    )
