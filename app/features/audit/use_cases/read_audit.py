from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.pages import rendered_page, selection_of
from ..policy import audit_subjects, require_position
from ..ports import Subject
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
    selection = selection_of(subjects, filters, area=area, name=name)
    before = require_position(context.cursor_key, selection, filters.cursor)
    page = await context.audit.query(selection, before=before, limit=PAGE_SIZE)
    return rendered_page(page, context.cursor_key, selection)
