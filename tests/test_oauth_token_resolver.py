"""The ``/mcp`` resolver of OAuth access tokens: only a live access token of
this server's resource resolves, to the grants its person chose (read-only
without ``memory.write``); every other credential goes to the token file."""

from pathlib import Path

import pytest

from app.features.oauth.domain import READ, SCOPES, client_token_id, digest
from app.features.oauth.ports import ClientRecord, TokenRecord, TokenResponse
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.infra.oauth.token_resolver import OAuthResolver
from app.infra.tokens.token_file import create_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.shared.identity import Grant, Identity, ResolutionFailure
from tests.support.oauth_context import ACCESS_TTL, ISSUER, Clock, oauth_context

RESOURCE = f"{ISSUER}/mcp"
GRANTS = {"user": Grant("ada", "owner"), "team": Grant("acme", "writer")}
CLIENT = ClientRecord(
    "wcl_client", "Assistant", ("https://a.example/cb",), "registered", 0.0
)


def issued(
    clock: Clock,
    store: MemoryOAuthStore,
    *,
    scopes: tuple[str, ...] = SCOPES,
    resource: str = RESOURCE,
    client: ClientRecord | None = CLIENT,
) -> TokenResponse:
    """A pair issued to ``client`` (saved in ``store`` unless None)."""
    if client is not None:
        store.save_client(client)
    return oauth_context(clock, store).issue_tokens(
        client_id=CLIENT.client_id if client is None else client.client_id,
        family="f-1",
        scopes=scopes,
        grants=GRANTS,
        resource=resource,
    )


@pytest.fixture
def token_file(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "tokens.json"
    secret, _ = create_token(path, {"user": Grant("bob", "owner")}, label="bob")
    return path, secret


def resolver(
    store: MemoryOAuthStore,
    clock: Clock,
    token_file: tuple[Path, str],
    resource: str | None = RESOURCE,
) -> OAuthResolver:
    tokens = TokenFileResolver(token_file[0])
    return OAuthResolver(store, tokens, resource=resource, clock=clock)


def test_an_access_token_resolves_to_its_grants_client_and_token_id(
    token_file: tuple[Path, str],
) -> None:
    clock, store = Clock(), MemoryOAuthStore()
    pair = issued(clock, store)
    found = resolver(store, clock, token_file).resolve(pair["access_token"])
    assert found == Identity(
        grants=GRANTS,
        label="oauth:Assistant",
        token_id=client_token_id(CLIENT.client_id),
    )


def test_a_client_without_a_name_or_registration_is_labelled_client(
    token_file: tuple[Path, str],
) -> None:
    clock, store = Clock(), MemoryOAuthStore()
    nameless = ClientRecord("wcl_nameless", "", CLIENT.redirect_uris, "registered", 0.0)
    for client in (nameless, None):
        pair = issued(clock, store, client=client)
        found = resolver(store, clock, token_file).resolve(pair["access_token"])
        assert isinstance(found, Identity) and found.label == "oauth:client"


def test_without_memory_write_every_grant_is_read_only(
    token_file: tuple[Path, str],
) -> None:
    clock, store = Clock(), MemoryOAuthStore()
    pair = issued(clock, store, scopes=(READ,))
    found = resolver(store, clock, token_file).resolve(pair["access_token"])
    assert isinstance(found, Identity)
    assert found.grants == {
        "user": Grant("ada", "reader"),
        "team": Grant("acme", "reader"),
    }


def test_an_access_token_stops_at_its_expiry(token_file: tuple[Path, str]) -> None:
    clock, store = Clock(), MemoryOAuthStore()
    pair = issued(clock, store)
    mcp = resolver(store, clock, token_file)
    clock.now += ACCESS_TTL - 0.001
    assert isinstance(mcp.resolve(pair["access_token"]), Identity)
    clock.now += 0.001
    assert mcp.resolve(pair["access_token"]) == ResolutionFailure(
        "The bearer token has expired."
    )


def test_unknown_refresh_and_revoked_tokens_are_refused(
    token_file: tuple[Path, str],
) -> None:
    clock, store = Clock(), MemoryOAuthStore()
    pair = issued(clock, store)
    mcp = resolver(store, clock, token_file)
    invalid = ResolutionFailure("The bearer token is not valid.")
    assert mcp.resolve("wco_" + "x" * 43) == invalid
    # a refresh token is no bearer credential, whatever its prefix says
    assert isinstance(mcp.resolve(pair["refresh_token"]), ResolutionFailure)
    refresh = store.find_token(digest(pair["refresh_token"]))
    assert refresh is not None
    renamed = "wco_" + pair["refresh_token"].removeprefix("wcr_")
    store.save_tokens([_with_digest(refresh, digest(renamed))])
    assert mcp.resolve(renamed) == invalid
    store.revoke_family("f-1")
    assert mcp.resolve(pair["access_token"]) == invalid


def _with_digest(record: TokenRecord, key: str) -> TokenRecord:
    return TokenRecord(
        key,
        record.kind,
        record.family,
        record.client_id,
        record.scopes,
        record.grants,
        record.resource,
        record.expires_at,
    )


def test_a_token_serves_only_the_resource_it_was_issued_for(
    token_file: tuple[Path, str],
) -> None:
    clock, store = Clock(), MemoryOAuthStore()
    ours = issued(clock, store)["access_token"]
    foreign = issued(clock, store, resource="https://other.example/mcp")
    elsewhere = issued(clock, store, resource=f"{ISSUER}/v1")["access_token"]
    configured = resolver(store, clock, token_file)
    assert isinstance(configured.resolve(ours), Identity)
    assert configured.resolve(foreign["access_token"]) == ResolutionFailure(
        "The bearer token is not valid."
    )
    # without a public URL the server knows its resource only by the path
    unconfigured = resolver(store, clock, token_file, resource=None)
    assert isinstance(unconfigured.resolve(foreign["access_token"]), Identity)
    assert isinstance(unconfigured.resolve(elsewhere), ResolutionFailure)


def test_any_other_credential_goes_to_the_token_file(
    token_file: tuple[Path, str],
) -> None:
    clock, store = Clock(), MemoryOAuthStore()
    mcp = resolver(store, clock, token_file)
    found = mcp.resolve(token_file[1])
    assert isinstance(found, Identity)
    assert found.grants == {"user": Grant("bob", "owner")} and found.label == "bob"
    assert isinstance(mcp.resolve("wct_unknown"), ResolutionFailure)
