from tenchi.contracts import contract

from app.shared.errors import audit_unavailable, invalid_argument, restricted_scope

from .schemas import AuditEvents, ReadAudit

read_audit_contract = contract(
    method="GET",
    path="/audit",
    query=ReadAudit,
    response=AuditEvents,
    errors=(invalid_argument, restricted_scope, audit_unavailable),
    name="read_audit",
    summary="Who read or changed the caller's memory, and when: newest first.",
    description=(
        "Events on the caller's own entities only, in scopes where the caller's "
        "role may audit (WENCHANG_AUDIT_ROLES, default owner and admin; other "
        "roles get 403 RESTRICTED_SCOPE role_required). Every operation call is "
        "an event, refused calls included with their error code; files lists "
        "what an index, list or search call returned. Never content."
    ),
    tags=("audit",),
)
