"""A consent-to-token flow over the in-memory OAuth store, for the token
endpoint's tests: a client, a code, its exchange and refreshes."""

from collections.abc import Awaitable
from dataclasses import dataclass

import pytest

from app.features.oauth.domain import (
    SCOPES,
    digest,
)
from app.features.oauth.policy import FOREIGN_RESOURCE, INVALID_CODE
from app.features.oauth.ports import ClientRecord, OAuthContext, TokenResponse
from app.features.oauth.use_cases.check_authorization import AuthorizationRequest
from app.features.oauth.use_cases.exchange_code import exchange_code
from app.features.oauth.use_cases.grant_consent import grant_consent
from app.features.oauth.use_cases.refresh_tokens import (
    INVALID_REFRESH,
    refresh_tokens,
)
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.shared.errors.oauth import OAuthError
from app.shared.identity import Grant
from tests.support.oauth_context import (
    ISSUER,
    Clock,
    Events,
    oauth_context,
)

CALLBACK = "http://127.0.0.1:33418/callback"
VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
RESOURCE = f"{ISSUER}/mcp"
GRANTS = {"user": Grant("ada", "owner")}


@dataclass
class Flow:
    clock: Clock
    store: MemoryOAuthStore
    events: Events
    context: OAuthContext

    async def code(self, client_id: str = "wcl_one", *, read_only: bool = False) -> str:
        request = AuthorizationRequest(
            self.store.get_client(client_id) or client(client_id),
            CALLBACK,
            "s-1",
            CHALLENGE,
            SCOPES,
            RESOURCE,
        )
        location = await grant_consent(
            request,
            GRANTS,
            ["user=ada:owner"],
            read_only=read_only,
            context=self.context,
        )
        return location.split("code=")[1].split("&")[0]

    async def exchange(self, issued: str, **changes: str) -> TokenResponse:
        form = {
            "grant_type": "authorization_code",
            "client_id": "wcl_one",
            "code": issued,
            "code_verifier": VERIFIER,
            "redirect_uri": CALLBACK,
            "resource": RESOURCE,
            **changes,
        }
        return await exchange_code(
            {k: v for k, v in form.items() if v != "-"}, self.context
        )

    async def tokens(self) -> TokenResponse:
        return await self.exchange(await self.code())

    async def refresh(self, refresh_token: str, **changes: str) -> TokenResponse:
        form = {"client_id": "wcl_one", "refresh_token": refresh_token, **changes}
        return await refresh_tokens(
            {k: v for k, v in form.items() if v != "-"}, self.context
        )

    def live(self, token: str) -> bool:
        return self.store.find_token(digest(token)) is not None


def client(client_id: str) -> ClientRecord:
    return ClientRecord(client_id, "One", (CALLBACK,), "registered", 1e6)


def new_flow() -> Flow:
    clock, store, events = Clock(), MemoryOAuthStore(), Events()
    for client_id in ("wcl_one", "wcl_two"):
        store.save_client(client(client_id))
    return Flow(clock, store, events, oauth_context(clock, store, events=events))


BAD_CODE = ("invalid_grant", INVALID_CODE)
BAD_REFRESH = ("invalid_grant", INVALID_REFRESH)
"""One refusal for a token or code unknown, expired, used or another client's,
so a caller learns nothing of which."""
FOREIGN = ("invalid_target", FOREIGN_RESOURCE)
UNREGISTERED = ("invalid_client", "The client is not registered.")
WIDER = ("invalid_scope", "A refresh may only narrow the granted scopes.")


async def refused(expected: tuple[str, str], call: Awaitable[object]) -> None:
    with pytest.raises(OAuthError) as refusal:
        await call
    assert (refusal.value.code, refusal.value.description) == expected
