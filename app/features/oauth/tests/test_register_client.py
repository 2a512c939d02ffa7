"""Dynamic Client Registration: public clients, checked redirect URIs, expiry unused."""

from collections.abc import Mapping

import pytest

from app.features.oauth.ports import OAuthContext
from app.features.oauth.use_cases.find_client import find_client
from app.features.oauth.use_cases.register_client import register_client
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.shared.errors.oauth import OAuthError
from app.shared.identity import Grant

DAY = 86_400.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def no_events(
    operation: str, client_id: str, grants: Mapping[str, Grant]
) -> None:
    del operation, client_id, grants


async def no_documents(url: str) -> object:
    raise OAuthError("invalid_client", url)


def context(clock: Clock, store: MemoryOAuthStore) -> OAuthContext:
    return OAuthContext(
        store=store,
        issuer="https://memory.example",
        access_ttl=3600,
        unused_client_ttl=30 * DAY,
        events=no_events,
        documents=no_documents,  # pyright: ignore[reportArgumentType]
        seal_key=b"k" * 32,
        clock=clock,
    )


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
