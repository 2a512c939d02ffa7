"""Refresh and revocation: a refresh token rotates, may only narrow its scopes,
and ends its whole family when presented twice; revocation stops a family."""

import pytest

from app.features.oauth.domain import READ, REFRESH_TTL_SECONDS, SCOPES, WRITE, digest
from app.features.oauth.use_cases.revoke_token import revoke_token
from tests.support.oauth_context import ACCESS_TTL, UNUSED_CLIENT_TTL

from .token_flow import (
    BAD_REFRESH,
    FOREIGN,
    GRANTS,
    RESOURCE,
    UNREGISTERED,
    WIDER,
    Flow,
    new_flow,
    refused,
)


@pytest.fixture
def flow() -> Flow:
    return new_flow()


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
