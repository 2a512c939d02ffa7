"""The token endpoint's grants and revocation: a code is taken once with its
PKCE verifier; a refresh token rotates, may only narrow its scopes, and ends
its whole family when presented twice; revocation stops a family."""

from collections.abc import Awaitable
from dataclasses import dataclass

import pytest

from app.features.oauth.domain import (
    READ,
    REFRESH_TTL_SECONDS,
    SCOPES,
    WRITE,
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
from app.features.oauth.use_cases.revoke_token import revoke_token
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.shared.errors.oauth import OAuthError
from app.shared.identity import Grant
from tests.support.oauth_context import (
    ACCESS_TTL,
    ISSUER,
    UNUSED_CLIENT_TTL,
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


@pytest.fixture
def flow() -> Flow:
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


async def test_a_code_and_its_verifier_become_a_token_pair(flow: Flow) -> None:
    answer = await flow.tokens()
    assert answer["token_type"] == "Bearer" and answer["expires_in"] == 3600
    assert answer["scope"] == "memory.read memory.write"
    access = flow.store.find_token(digest(answer["access_token"]))
    refresh = flow.store.find_token(digest(answer["refresh_token"]))
    assert access is not None and refresh is not None
    assert (access.kind, refresh.kind) == ("access", "refresh")
    assert access.family == refresh.family and len(access.family) == 32
    assert access.expires_at == flow.clock.now + ACCESS_TTL
    assert refresh.expires_at == flow.clock.now + REFRESH_TTL_SECONDS
    assert refresh.expires_at == flow.clock.now + 90 * 86_400
    for record in (access, refresh):
        assert (record.client_id, record.scopes) == ("wcl_one", SCOPES)
        assert (record.grants, record.resource) == (GRANTS, RESOURCE)
        assert not record.used
    assert flow.events.operations() == ["oauth.consent", "oauth.token"]
    assert flow.events.sent[-1] == ("oauth.token", "wcl_one", GRANTS)
    stored = flow.store.get_client("wcl_one")
    assert stored is not None and stored.last_used_at == flow.clock.now


async def test_each_consent_starts_its_own_family(flow: Flow) -> None:
    first, second = await flow.tokens(), await flow.tokens()
    families = {
        record.family
        for token in (first["access_token"], second["access_token"])
        if (record := flow.store.find_token(digest(token))) is not None
    }
    assert len(families) == 2


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"code_verifier": "x" * 43},
            ("invalid_grant", "code_verifier does not match the code_challenge."),
        ),
        ({"client_id": "wcl_two"}, BAD_CODE),
        (
            {"redirect_uri": "http://127.0.0.1:33418/other"},
            ("invalid_grant", "redirect_uri differs from the authorization request's."),
        ),
        ({"resource": "https://elsewhere.example/mcp"}, FOREIGN),
    ],
)
async def test_a_refused_exchange_uses_the_code_up(
    flow: Flow, changes: dict[str, str], expected: tuple[str, str]
) -> None:
    issued = await flow.code()
    await refused(expected, flow.exchange(issued, **changes))
    await refused(BAD_CODE, flow.exchange(issued))
    assert flow.events.operations() == ["oauth.consent"]


async def test_a_code_is_taken_once(flow: Flow) -> None:
    issued = await flow.code()
    await flow.exchange(issued)
    await refused(BAD_CODE, flow.exchange(issued))


async def test_redirect_uri_and_resource_may_be_left_out(flow: Flow) -> None:
    answer = await flow.exchange(await flow.code(), redirect_uri="-", resource="-")
    assert flow.live(answer["access_token"])


@pytest.mark.parametrize("missing", ["code", "code_verifier"])
@pytest.mark.parametrize("value", ["", "-"])  # empty, or not sent
async def test_code_and_verifier_are_required(
    flow: Flow, missing: str, value: str
) -> None:
    issued = await flow.code()
    await refused(
        ("invalid_request", "code and code_verifier are required."),
        flow.exchange(issued, **{missing: value}),
    )
    await flow.exchange(issued)  # the code was not taken


async def test_a_code_lives_60_seconds(flow: Flow) -> None:
    late = await flow.code()
    in_time = await flow.code()
    flow.clock.now += 59.999
    assert flow.live((await flow.exchange(in_time))["access_token"])
    flow.clock.now += 0.001
    await refused(BAD_CODE, flow.exchange(late))


@pytest.mark.parametrize("client_id", ["wcl_x", "-"])  # unknown, or not sent
async def test_an_unknown_client_is_invalid_client(flow: Flow, client_id: str) -> None:
    await refused(UNREGISTERED, flow.exchange(await flow.code(), client_id=client_id))


async def test_a_refresh_rotates_within_the_family(flow: Flow) -> None:
    first = await flow.tokens()
    flow.clock.now += 10
    second = await flow.refresh(first["refresh_token"])
    old = flow.store.find_token(digest(first["refresh_token"]))
    new = flow.store.find_token(digest(second["refresh_token"]))
    assert old is not None and new is not None
    assert old.used and not new.used and old.family == new.family
    assert new.expires_at == flow.clock.now + REFRESH_TTL_SECONDS
    assert (new.scopes, new.grants, new.resource) == (SCOPES, GRANTS, RESOURCE)
    assert flow.events.sent[-1] == ("oauth.refresh", "wcl_one", GRANTS)
    assert flow.live(first["access_token"])  # rotation alone revokes nothing


async def test_a_reused_refresh_token_ends_its_family(flow: Flow) -> None:
    first = await flow.tokens()
    other = await flow.tokens()
    second = await flow.refresh(first["refresh_token"])
    await refused(BAD_REFRESH, flow.refresh(first["refresh_token"]))
    for token in (first, second):
        assert not flow.live(token["access_token"])
        assert not flow.live(token["refresh_token"])
    assert flow.live(other["access_token"])  # another consent's family stays
    assert flow.events.sent[-1] == ("oauth.refresh_reuse", "wcl_one", GRANTS)
    await refused(BAD_REFRESH, flow.refresh(second["refresh_token"]))


@pytest.mark.parametrize(
    ("scope", "granted"),
    [("memory.read", (READ,)), ("memory.write", (WRITE,)), ("-", SCOPES)],
)
async def test_a_refresh_may_narrow_its_scopes(
    flow: Flow, scope: str, granted: tuple[str, ...]
) -> None:
    first = await flow.tokens()
    answer = await flow.refresh(first["refresh_token"], scope=scope)
    assert answer["scope"] == " ".join(granted)
    record = flow.store.find_token(digest(answer["access_token"]))
    assert record is not None and record.scopes == granted


async def test_a_refresh_without_scope_keeps_the_granted_ones(flow: Flow) -> None:
    read_only = await flow.exchange(await flow.code(read_only=True))
    answer = await flow.refresh(read_only["refresh_token"], resource=RESOURCE)
    assert answer["scope"] == "memory.read"


async def test_a_refresh_may_not_widen_its_scopes(flow: Flow) -> None:
    read_only = await flow.exchange(await flow.code(read_only=True))
    await refused(WIDER, flow.refresh(read_only["refresh_token"], scope="memory.write"))
    fresh = await flow.tokens()
    await refused(WIDER, flow.refresh(fresh["refresh_token"], scope="x"))


@pytest.mark.parametrize(
    "changes",
    [
        {"refresh_token": ""},
        {"refresh_token": "wcr_unknown"},
        {"client_id": "wcl_two"},
    ],
)
async def test_an_unknown_or_foreign_refresh_token_is_refused(
    flow: Flow, changes: dict[str, str]
) -> None:
    first = await flow.tokens()
    form = {"refresh_token": first["refresh_token"], **changes}
    await refused(BAD_REFRESH, flow.refresh(**form))
    await flow.refresh(first["refresh_token"])  # it was not used up


async def test_a_refresh_names_its_client(flow: Flow) -> None:
    first = await flow.tokens()
    await refused(UNREGISTERED, flow.refresh(first["refresh_token"], client_id="-"))


async def test_an_access_token_is_no_refresh_token(flow: Flow) -> None:
    first = await flow.tokens()
    await refused(BAD_REFRESH, flow.refresh(first["access_token"]))


async def test_a_refresh_token_expires_after_90_days(flow: Flow) -> None:
    late, in_time = await flow.tokens(), await flow.tokens()
    flow.clock.now += REFRESH_TTL_SECONDS - 0.001
    flow.store.touch_client("wcl_one", flow.clock.now)  # a client still in use
    await flow.refresh(in_time["refresh_token"])
    flow.clock.now += 0.001
    await refused(BAD_REFRESH, flow.refresh(late["refresh_token"]))


async def test_a_refresh_for_another_resource_is_invalid_target(flow: Flow) -> None:
    first = await flow.tokens()
    await refused(
        FOREIGN,
        flow.refresh(first["refresh_token"], resource="https://other.example/mcp"),
    )


async def test_revoking_a_token_stops_its_family_only(flow: Flow) -> None:
    first, other = await flow.tokens(), await flow.tokens()
    second = await flow.refresh(first["refresh_token"])
    await revoke_token(
        {"client_id": "wcl_one", "token": second["access_token"]}, flow.context
    )
    for token in (first, second):
        assert not flow.live(token["access_token"])
        assert not flow.live(token["refresh_token"])
    assert flow.live(other["refresh_token"])
    assert flow.events.sent[-1] == ("oauth.revoke", "wcl_one", GRANTS)


async def test_an_unknown_or_foreign_token_is_revoked_silently(flow: Flow) -> None:
    first = await flow.tokens()
    sent = len(flow.events.sent)
    for form in (
        {"client_id": "wcl_two", "token": first["access_token"]},
        {"client_id": "wcl_one", "token": "wco_unknown"},
    ):
        assert await revoke_token(form, flow.context) is None
    assert flow.live(first["access_token"]) and len(flow.events.sent) == sent
    await refused(
        ("invalid_request", "token is required."),
        revoke_token({"client_id": "wcl_one"}, flow.context),
    )
    await refused(
        UNREGISTERED, revoke_token({"token": first["access_token"]}, flow.context)
    )


async def test_issuing_sweeps_expired_tokens(flow: Flow) -> None:
    first = await flow.tokens()
    flow.clock.now += ACCESS_TTL
    assert flow.live(first["access_token"])
    await flow.refresh(first["refresh_token"])
    assert not flow.live(first["access_token"])


async def test_a_registration_unused_for_its_ttl_is_refused(flow: Flow) -> None:
    form = {"client_id": "wcl_two"}
    flow.clock.now = 1e6 + UNUSED_CLIENT_TTL
    await flow.exchange(await flow.code("wcl_two"), **form)  # just in time
    flow.clock.now += UNUSED_CLIENT_TTL
    await flow.exchange(await flow.code("wcl_two"), **form)  # kept alive by use
    flow.clock.now += UNUSED_CLIENT_TTL + 0.001
    await refused(
        ("invalid_client", "The client registration expired unused; register again."),
        flow.exchange(await flow.code("wcl_two"), **form),
    )
