"""Dynamic Client Registration: public clients, checked redirect URIs, expiry unused."""

import pytest

from app.features.oauth.use_cases.find_client import find_client
from app.features.oauth.use_cases.register_client import register_client
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.shared.errors.oauth import OAuthError
from tests.support.oauth_context import DAY, Clock
from tests.support.oauth_context import oauth_context as context

METADATA, REDIRECT = "invalid_client_metadata", "invalid_redirect_uri"
GRANT_TYPES = "grant_types may hold authorization_code and refresh_token"
NAME = "client_name must be printable text of 200 characters or fewer"
URI_LIST = "redirect_uris must be a list of URIs"


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
    ("metadata", "code", "description"),
    [
        ({"grant_types": ["implicit"]}, METADATA, GRANT_TYPES),
        ({"grant_types": "authorization_code"}, METADATA, GRANT_TYPES),
        ({"response_types": ["token"]}, METADATA, 'response_types must be ["code"]'),
        (
            {"response_types": ["code", "token"]},
            METADATA,
            'response_types must be ["code"]',
        ),
        ({"client_name": "n" * 201}, METADATA, NAME),
        ({"client_name": "line\nbreak"}, METADATA, NAME),
        ({"client_name": 7}, METADATA, NAME),
        ({"redirect_uris": []}, REDIRECT, URI_LIST),
        ({"redirect_uris": "https://app.example/cb"}, REDIRECT, URI_LIST),
        ({"redirect_uris": None}, REDIRECT, URI_LIST),
        ({"redirect_uris": [7]}, REDIRECT, "each redirect URI is a string"),
        (
            {"redirect_uris": ["https://app.example/cb", "http://a.example/"]},
            REDIRECT,
            "a redirect URI must be https, or http on a loopback address",
        ),
    ],
)
async def test_bad_metadata_is_refused_saying_what_to_fix(
    metadata: dict[str, object], code: str, description: str
) -> None:
    asked = {"redirect_uris": ["https://app.example/cb"], **metadata}
    with pytest.raises(OAuthError) as refused:
        await register_client(asked, context())
    assert (refused.value.code, refused.value.description) == (code, description)


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
    assert (refused.value.code, refused.value.description) == (
        REDIRECT,
        "register at most 10 redirect URIs",
    )
    # one too many is the refusal, whatever follows the eleventh
    with pytest.raises(OAuthError, match="at most 10"):
        await register_client({"redirect_uris": [*uris, 7]}, context())


async def test_an_unregistered_client_id_is_invalid_client() -> None:
    with pytest.raises(OAuthError) as refused:
        await find_client("wcl_nobody", context())
    assert refused.value.code == "invalid_client"


async def test_a_new_registration_keeps_recent_ones() -> None:
    clock, store = Clock(), MemoryOAuthStore()
    first = await register_client(
        {"redirect_uris": ["https://a.example/cb"]}, context(clock, store)
    )
    clock.now += DAY
    await register_client(
        {"redirect_uris": ["https://b.example/cb"]}, context(clock, store)
    )
    assert store.get_client(first["client_id"]) is not None
