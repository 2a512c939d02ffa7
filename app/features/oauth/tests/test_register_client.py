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


async def test_the_answer_is_rfc_7591_client_information() -> None:
    clock, store = Clock(1_000_000.75), MemoryOAuthStore()
    answer = await register_client(
        {"redirect_uris": ["https://app.example/cb"]}, context(clock, store)
    )
    client_id = answer["client_id"]
    assert client_id.startswith("wcl_") and len(client_id) == 4 + 43
    assert answer == {
        "client_id": client_id,
        "client_id_issued_at": 1_000_000,
        "client_name": None,
        "redirect_uris": ["https://app.example/cb"],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    saved = store.get_client(client_id)
    assert saved is not None
    assert (saved.name, saved.redirect_uris) == ("", ("https://app.example/cb",))
    assert (saved.kind, saved.created_at, saved.last_used_at) == (
        "registered",
        clock.now,
        None,
    )


@pytest.mark.parametrize(
    ("asked", "granted"),
    [
        (
            ["refresh_token", "authorization_code"],
            ["authorization_code", "refresh_token"],
        ),
        (["refresh_token"], ["refresh_token"]),
        ([], []),
    ],
)
async def test_grant_types_are_ours_in_our_order(
    asked: list[str], granted: list[str]
) -> None:
    answer = await register_client(
        {"redirect_uris": ["https://app.example/cb"], "grant_types": asked},
        context(),
    )
    assert answer["grant_types"] == granted


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        ({"grant_types": ["implicit"]}, "invalid_client_metadata"),
        ({"grant_types": "authorization_code"}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"response_types": ["code", "token"]}, "invalid_client_metadata"),
        ({"client_name": "n" * 201}, "invalid_client_metadata"),
        ({"client_name": "line\nbreak"}, "invalid_client_metadata"),
        ({"client_name": 7}, "invalid_client_metadata"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": "https://app.example/cb"}, "invalid_redirect_uri"),
        ({"redirect_uris": None}, "invalid_redirect_uri"),
        ({"redirect_uris": [7]}, "invalid_redirect_uri"),
        (
            {"redirect_uris": ["https://app.example/cb", "http://a.example/"]},
            "invalid_redirect_uri",
        ),
    ],
)
async def test_bad_metadata_is_refused(metadata: dict[str, object], code: str) -> None:
    asked = {"redirect_uris": ["https://app.example/cb"], **metadata}
    with pytest.raises(OAuthError) as refused:
        await register_client(asked, context())
    assert refused.value.code == code


async def test_a_name_of_200_printable_characters_is_kept() -> None:
    name = "Ä" * 200
    answer = await register_client(
        {"redirect_uris": ["https://app.example/cb"], "client_name": name}, context()
    )
    assert answer["client_name"] == name


async def test_at_most_ten_redirect_uris() -> None:
    uris = [f"https://app.example/cb{n}" for n in range(11)]
    answer = await register_client({"redirect_uris": uris[:10]}, context())
    assert answer["redirect_uris"] == uris[:10]
    with pytest.raises(OAuthError) as refused:
        await register_client({"redirect_uris": uris}, context())
    assert refused.value.code == "invalid_redirect_uri"
    assert "at most 10" in refused.value.description
    # one too many is the refusal, whatever follows the eleventh
    with pytest.raises(OAuthError, match="at most 10"):
        await register_client({"redirect_uris": [*uris, 7]}, context())


async def test_an_unregistered_client_id_is_invalid_client() -> None:
    with pytest.raises(OAuthError) as refused:
        await find_client("wcl_nobody", context())
    assert refused.value.code == "invalid_client"
