"""The authorization request and the consent: which refusals may go back to
the redirect URI (RFC 6749 4.1.2.1), what the code records and where the
browser goes with it."""

import pytest

from app.features.oauth.domain import READ, SCOPES, WRITE, digest
from app.features.oauth.policy import FOREIGN_RESOURCE
from app.features.oauth.ports import ClientRecord
from app.features.oauth.use_cases.check_authorization import (
    AuthorizationRequest,
    Unredirectable,
    check_authorization,
)
from app.features.oauth.use_cases.grant_consent import (
    grant_consent,
    redirect_to,
    refusal_redirect,
)
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.shared.errors.oauth import OAuthError
from app.shared.identity import Grant
from tests.support.oauth_context import ISSUER, Clock, Events, oauth_context

CALLBACK = "http://127.0.0.1:33418/callback"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
RESOURCE = f"{ISSUER}/mcp"
HELD = {"user": Grant("ada", "owner"), "team": Grant("acme", "writer")}


def client(*uris: str) -> ClientRecord:
    return ClientRecord("wcl_one", "One", uris or (CALLBACK,), "registered", 1e6)


def params(**changes: str) -> dict[str, str]:
    asked = {
        "response_type": "code",
        "client_id": "wcl_one",
        "redirect_uri": CALLBACK,
        "state": "s-1",
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "scope": "memory.read memory.write",
        "resource": RESOURCE,
    }
    return {k: v for k, v in {**asked, **changes}.items() if v != "-"}


async def checked(
    asked: dict[str, str], *uris: str, store: MemoryOAuthStore | None = None
) -> AuthorizationRequest:
    store = MemoryOAuthStore() if store is None else store
    store.save_client(client(*uris))
    return await check_authorization(asked, oauth_context(Clock(), store))


async def refused(asked: dict[str, str], *uris: str) -> OAuthError:
    with pytest.raises(OAuthError) as refusal:
        await checked(asked, *uris)
    return refusal.value


async def test_a_complete_request_is_accepted() -> None:
    request = await checked(params())
    assert request == AuthorizationRequest(
        client(), CALLBACK, "s-1", CHALLENGE, SCOPES, RESOURCE
    )


async def test_a_sole_registered_redirect_uri_may_be_left_out() -> None:
    assert (await checked(params(redirect_uri="-"))).redirect_uri == CALLBACK
    other = "https://app.example/cb"
    many = await refused(params(redirect_uri="-"), CALLBACK, other)
    assert isinstance(many, Unredirectable) and many.code == "invalid_request"
    # a loopback redirect URI may come back on another port (RFC 8252 7.3)
    moved = "http://127.0.0.1:50000/callback"
    assert (await checked(params(redirect_uri=moved))).redirect_uri == moved


NOT_REGISTERED_URI = "redirect_uri is not one the client registered."


@pytest.mark.parametrize(
    ("asked", "code", "description"),
    [
        (params(client_id="-"), "invalid_request", "client_id is missing."),
        (params(client_id=""), "invalid_request", "client_id is missing."),
        (params(client_id="wcl_x"), "invalid_client", "The client is not registered."),
        (
            params(redirect_uri="https://a.example/cb"),
            "invalid_request",
            NOT_REGISTERED_URI,
        ),
        (
            params(redirect_uri="http://127.0.0.1:1/else"),
            "invalid_request",
            NOT_REGISTERED_URI,
        ),
    ],
)
async def test_an_unknown_client_or_redirect_uri_is_never_redirected_to(
    asked: dict[str, str], code: str, description: str
) -> None:
    refusal = await refused(asked)
    assert isinstance(refusal, Unredirectable)
    assert (refusal.code, refusal.description) == (code, description)


async def test_a_metadata_document_client_is_fetched() -> None:
    url = "https://app.example/client.json"
    fetched: list[str] = []

    async def documents(client_id: str) -> ClientRecord:
        fetched.append(client_id)
        return ClientRecord(client_id, "Doc", (CALLBACK,), "metadata_document", 0.0)

    context = oauth_context(documents=documents)
    request = await check_authorization(params(client_id=url), context)
    assert request.client.client_id == url and fetched == [url]


PKCE = ("invalid_request", "PKCE is required: code_challenge with method S256.")
NO_STATE = ("invalid_request", "state is required.")
RESPONSE_TYPE = ("unsupported_response_type", "response_type must be code.")


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        (params(response_type="token"), RESPONSE_TYPE),
        (params(response_type="-"), RESPONSE_TYPE),
        (params(code_challenge="-"), PKCE),
        (params(code_challenge_method="plain"), PKCE),
        (params(code_challenge_method="-"), PKCE),
        (params(code_challenge=CHALLENGE[:42]), PKCE),
        (params(code_challenge=CHALLENGE + "/"), PKCE),
        (params(state="-"), NO_STATE),
        (params(state=""), NO_STATE),
        (
            params(scope="memory.read openid"),
            ("invalid_scope", "scope may hold memory.read and memory.write."),
        ),
        (
            params(resource="https://elsewhere.example/mcp"),
            ("invalid_target", FOREIGN_RESOURCE),
        ),
        (params(resource=RESOURCE + "X"), ("invalid_target", FOREIGN_RESOURCE)),
    ],
)
async def test_a_bad_request_of_a_known_client_is_redirected_with_its_error(
    asked: dict[str, str], expected: tuple[str, str]
) -> None:
    refusal = await refused(asked)
    assert not isinstance(refusal, Unredirectable)
    assert (refusal.code, refusal.description) == expected


@pytest.mark.parametrize(
    ("changes", "scopes", "resource"),
    [
        ({"scope": "-"}, SCOPES, RESOURCE),
        ({"scope": "memory.read"}, (READ,), RESOURCE),
        ({"resource": "-"}, SCOPES, RESOURCE),
        ({"resource": ""}, SCOPES, RESOURCE),
        ({"resource": RESOURCE + "/"}, SCOPES, RESOURCE),
        ({"code_challenge": "a" * 128}, SCOPES, RESOURCE),
    ],
)
async def test_scope_and_resource_have_defaults(
    changes: dict[str, str], scopes: tuple[str, ...], resource: str
) -> None:
    request = await checked(params(**changes))
    assert (request.scopes, request.resource) == (scopes, resource)


def request_of(scopes: tuple[str, ...] = SCOPES) -> AuthorizationRequest:
    return AuthorizationRequest(
        client(), CALLBACK + "?app=1", "s-1", CHALLENGE, scopes, RESOURCE
    )


async def test_consent_saves_a_60_second_code_and_redirects_with_it() -> None:
    clock, store, events = Clock(), MemoryOAuthStore(), Events()
    context = oauth_context(clock, store, events=events)
    location = await grant_consent(
        request_of(), HELD, ["team=acme:writer"], read_only=False, context=context
    )
    code = location.split("code=")[1].split("&")[0]
    assert location == (
        f"{CALLBACK}?app=1&code={code}&state=s-1&iss=https%3A%2F%2Fmemory.example"
    )
    assert code.startswith("wcc_")
    record = store.take_code(digest(code))
    assert record is not None
    assert record.client_id == "wcl_one" and record.redirect_uri == CALLBACK + "?app=1"
    assert record.code_challenge == CHALLENGE and record.resource == RESOURCE
    assert record.scopes == SCOPES
    assert record.grants == {"team": Grant("acme", "writer")}
    assert record.expires_at == clock.now + 60
    assert events.sent == [
        ("oauth.consent", "wcl_one", {"team": Grant("acme", "writer")})
    ]


async def test_a_read_only_consent_narrows_grants_and_scopes() -> None:
    store = MemoryOAuthStore()
    context = oauth_context(store=store)
    location = await grant_consent(
        request_of(),
        HELD,
        ["user=ada:owner", "team=acme:writer"],
        read_only=True,
        context=context,
    )
    code = location.split("code=")[1].split("&")[0]
    record = store.take_code(digest(code))
    assert record is not None and record.scopes == (READ,)
    assert record.grants == {
        "user": Grant("ada", "reader"),
        "team": Grant("acme", "reader"),
    }
    location = await grant_consent(
        request_of((WRITE,)),
        HELD,
        ["user=ada:owner"],
        read_only=False,
        context=context,
    )
    record = store.take_code(digest(location.split("code=")[1].split("&")[0]))
    assert record is not None and record.scopes == (WRITE,)
    assert record.grants == {"user": Grant("ada", "owner")}


@pytest.mark.parametrize(
    "chosen",
    [[], ["team=acme:owner"], ["user=ada:owner", "user=bob:owner"], ["team=acme"]],
)
async def test_only_grants_the_person_holds_may_be_chosen(chosen: list[str]) -> None:
    store, events = MemoryOAuthStore(), Events()
    context = oauth_context(store=store, events=events)
    with pytest.raises(OAuthError) as refusal:
        await grant_consent(
            request_of(), HELD, chosen, read_only=False, context=context
        )
    assert (refusal.value.code, refusal.value.description) == (
        "invalid_request",
        "Choose at least one of your grants.",
    )
    assert events.sent == []


def test_a_refusal_goes_back_with_its_error_state_and_issuer() -> None:
    denied = OAuthError("access_denied", "The person declined.")
    assert refusal_redirect("https://app.example/cb?x=1", "s 1", denied, ISSUER) == (
        "https://app.example/cb?x=1&error=access_denied"
        "&error_description=The+person+declined.&state=s+1"
        "&iss=https%3A%2F%2Fmemory.example"
    )
    assert redirect_to("https://app.example/cb?keep=&x=1", code="c") == (
        "https://app.example/cb?keep=&x=1&code=c"
    )
