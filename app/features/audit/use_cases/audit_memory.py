from app.server.context import AppContext

from ..policy import entity_subject
from ..ports import AuditSelection
from ..schemas import AuditEntity, AuditEvents
from .read_audit import page_of_events


async def audit_memory(request: AuditEntity, context: AppContext) -> AuditEvents:
    """One entity's events, newest first: the operator names the entity."""
    subject = entity_subject(request.scope, request.entity_id)
    selection = AuditSelection(
        subjects=(subject,),
        since=request.since,
        until=request.until,
        operation=request.operation,
    )
    return await page_of_events(context, selection, request)
