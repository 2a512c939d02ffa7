"""RFC 7009 revocation: a token, and every token issued with it, stops working."""

from collections.abc import Mapping

from app.features.oauth.domain import digest
from app.features.oauth.policy import require_holder
from app.features.oauth.ports import OAuthContext
from app.features.oauth.use_cases.find_client import find_client
from app.shared.errors.oauth import OAuthError


async def revoke_token(form: Mapping[str, str], context: OAuthContext) -> None:
    """Revokes the family of ``token`` if this client holds it; an unknown
    token is no error (RFC 7009 §2.2), so nothing is learnt from the answer."""
    client = await find_client(form.get("client_id", ""), context)
    token = form.get("token", "")
    if not token:
        raise OAuthError("invalid_request", "token is required.")
    record = context.store.find_token(digest(token))
    if record is None:
        return
    try:
        require_holder(record.client_id, client, "not this client's token")
    except OAuthError:
        return  # RFC 7009 §2.2: another client's token is answered like an unknown one
    context.store.revoke_family(record.family)
    await context.events("oauth.revoke", client.client_id, record.grants)
