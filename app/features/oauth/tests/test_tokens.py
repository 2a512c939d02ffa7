"""The token endpoint's code grant: a code is taken once, within 60 seconds,
with its PKCE verifier; each consent starts its own token family."""

import pytest

from app.features.oauth.domain import REFRESH_TTL_SECONDS, SCOPES, digest
from tests.support.oauth_context import ACCESS_TTL

from .token_flow import (
    BAD_CODE,
    FOREIGN,
    GRANTS,
    RESOURCE,
    UNREGISTERED,
    Flow,
    new_flow,
    refused,
)


@pytest.fixture
def flow() -> Flow:
    return new_flow()


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
