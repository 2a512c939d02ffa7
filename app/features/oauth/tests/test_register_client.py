"""Dynamic Client Registration: public clients, checked redirect URIs, expiry unused."""

import pytest

from app.features.oauth.use_cases.find_client import find_client
from app.features.oauth.use_cases.register_client import register_client
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.shared.errors.oauth import OAuthError
from tests.support.oauth_context import DAY, Clock
from tests.support.oauth_context import oauth_context as context


async def test_a_registration_is_public_and_keeps_its_redirect_uris() -> None:
    answer = await register_client(
        {
            "client_name": "Assistant",
            "redirect_uris": ["https://app.example/cb", "http://127.0.0.1:9/cb"],
            "token_endpoint_auth_method": "client_secret_basic",
        },
        context(Clock(), MemoryOAuthStore()),
    )
    assert answer["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in answer
    assert answer["redirect_uris"] == [
        "https://app.example/cb",
        "http://127.0.0.1:9/cb",
    ]


@pytest.mark.parametrize(
    "uri", ["http://app.example/cb", "https://app.example/cb#frag", "myapp:/cb"]
)
async def test_a_redirect_uri_must_be_https_or_loopback(uri: str) -> None:
    with pytest.raises(OAuthError) as refused:
        await register_client(
            {"redirect_uris": [uri]}, context(Clock(), MemoryOAuthStore())
        )
    assert refused.value.code == "invalid_redirect_uri"


async def test_an_unused_registration_expires() -> None:
    clock, store = Clock(), MemoryOAuthStore()
    used_context = context(clock, store)
    unused = await register_client(
        {"redirect_uris": ["https://a.example/cb"]}, used_context
    )
    used = await register_client(
        {"redirect_uris": ["https://b.example/cb"]}, used_context
    )
    clock.now += 29 * DAY
    store.touch_client(used["client_id"], clock.now)
    clock.now += 2 * DAY

    with pytest.raises(OAuthError) as expired:
        await find_client(unused["client_id"], used_context)
    assert expired.value.code == "invalid_client"
    assert (await find_client(used["client_id"], used_context)).client_id == used[
        "client_id"
    ]
    await register_client({"redirect_uris": ["https://c.example/cb"]}, used_context)
    assert store.get_client(unused["client_id"]) is None
