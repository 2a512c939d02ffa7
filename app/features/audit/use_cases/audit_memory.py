from app.server.context import AppContext

from ..policy import entity_subject
from ..schemas import AuditEntity, AuditEvents
from .read_audit import page_of_events


async def audit_memory(request: AuditEntity, context: AppContext) -> AuditEvents:
    """One entity's events, newest first: the operator names the entity."""
    subject = entity_subject(request.scope, request.entity_id)
    return await page_of_events(context, (subject,), request)
