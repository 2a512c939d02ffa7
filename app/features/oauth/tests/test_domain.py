"""The pure OAuth rules: secrets and digests, PKCE (RFC 7636), scopes, and
redirect URIs (https, or loopback http whose port may vary, RFC 8252)."""

import base64
import hashlib
import re

import pytest

from app.features.oauth.domain import (
    READ,
    SCOPES,
    WRITE,
    client_token_id,
    digest,
    effective_grants,
    grant_text,
    is_loopback_host,
    new_secret,
    parse_scopes,
    pkce_matches,
    redirect_uri_matches,
    redirect_uri_problem,
)
from app.shared.identity import Grant

# RFC 7636 Appendix B
RFC_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
RFC_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_a_secret_carries_its_prefix_and_256_random_bits() -> None:
    first, second = new_secret("wco_"), new_secret("wco_")
    assert first.startswith("wco_") and first != second
    assert re.fullmatch(r"wco_[A-Za-z0-9_-]{43}", first)


def test_the_store_keeps_a_tagged_sha256_of_a_secret_not_the_secret() -> None:
    secret = new_secret("wcr_")
    kept = digest(secret)
    # the documented record: SHA-256 of the tagged secret, so a digest made by
    # one release still finds the token after an upgrade
    tagged = hashlib.sha256(b"wenchang-oauth\0" + secret.encode()).hexdigest()
    assert kept == tagged and secret not in kept
    assert digest(secret) == kept and digest(secret + "x") != kept


def test_a_client_token_id_is_stable_short_and_names_no_secret() -> None:
    token_id = client_token_id("wcl_abc")
    assert re.fullmatch(r"oauth-[0-9a-f]{16}", token_id)
    assert token_id == client_token_id("wcl_abc") != client_token_id("wcl_abd")
    assert "wcl_abc" not in token_id


def test_pkce_s256_matches_the_rfc_example() -> None:
    assert pkce_matches(RFC_VERIFIER, RFC_CHALLENGE)
    assert not pkce_matches(RFC_VERIFIER[:-1] + "l", RFC_CHALLENGE)
    assert not pkce_matches(RFC_VERIFIER, RFC_CHALLENGE[:-1] + "N")
    # the plain method is not served: the challenge is never the verifier
    assert not pkce_matches(RFC_VERIFIER, RFC_VERIFIER)


def s256(verifier: str) -> str:
    hashed = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(hashed).rstrip(b"=").decode()


@pytest.mark.parametrize(
    ("verifier", "allowed"),
    [
        ("a" * 42, False),
        ("a" * 43, True),
        ("a" * 128, True),
        ("a" * 129, False),
        ("aZ09-._~" * 6, True),
        ("a" * 42 + "+", False),
        ("a" * 42 + "/", False),
        ("a" * 42 + "=", False),
        ("a" * 42 + " ", False),
        ("a" * 42 + "\n", False),
    ],
)
def test_a_verifier_is_43_to_128_unreserved_characters(
    verifier: str, allowed: bool
) -> None:
    assert pkce_matches(verifier, s256(verifier)) is allowed


def test_a_non_ascii_verifier_or_challenge_is_refused_not_an_error() -> None:
    # with "?" for each character they cannot encode, these would collide
    assert not pkce_matches("é" * 43, s256("?" * 43))
    assert not pkce_matches("a" * 43, "é" * 43)


@pytest.mark.parametrize(
    ("text", "scopes"),
    [
        (None, SCOPES),
        ("", SCOPES),
        ("  ", SCOPES),
        ("memory.read", (READ,)),
        ("memory.write", (WRITE,)),
        ("memory.write  memory.read", (READ, WRITE)),
        ("memory.read memory.read", (READ,)),
        ("memory.read memory.admin", None),
        ("openid", None),
    ],
)
def test_scopes_are_ours_in_our_order_and_none_asks_for_both(
    text: str | None, scopes: tuple[str, ...] | None
) -> None:
    assert parse_scopes(text) == scopes


def test_without_memory_write_every_grant_acts_read_only() -> None:
    grants = {"user": Grant("ada", "owner"), "team": Grant("acme", "writer")}
    assert effective_grants(grants, SCOPES) == grants
    assert effective_grants(grants, (WRITE,)) == grants
    assert effective_grants(grants, (READ,)) == {
        "user": Grant("ada", "reader"),
        "team": Grant("acme", "reader"),
    }
    assert effective_grants(grants, ()) == effective_grants(grants, (READ,))


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.9.9.9", True),
        ("::1", True),
        ("0:0:0:0:0:0:0:1", True),
        ("10.0.0.1", False),
        ("example.com", False),
        ("localhost.example.com", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example/cb",
        "https://app.example:8443/cb?x=1",
        "http://127.0.0.1:33418/callback",
        "http://localhost/cb",
        "http://[::1]:9/cb",
    ],
)
def test_https_and_loopback_http_redirect_uris_may_be_registered(uri: str) -> None:
    assert redirect_uri_problem(uri) is None


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("https://app.example/cb#frag", "a redirect URI needs a host and no fragment"),
        ("https:///cb", "a redirect URI needs a host and no fragment"),
        ("myapp:/cb", "a redirect URI needs a host and no fragment"),
        (
            "http://app.example/cb",
            "a redirect URI must be https, or http on a loopback address",
        ),
        (
            "http://10.0.0.1/cb",
            "a redirect URI must be https, or http on a loopback address",
        ),
        (
            "ftp://127.0.0.1/cb",
            "a redirect URI must be https, or http on a loopback address",
        ),
        (
            "myapp://callback/cb",
            "a redirect URI must be https, or http on a loopback address",
        ),
    ],
)
def test_other_redirect_uris_are_refused_with_the_reason(
    uri: str, problem: str
) -> None:
    assert redirect_uri_problem(uri) == problem


@pytest.mark.parametrize(
    ("registered", "given", "matches"),
    [
        ("https://app.example/cb", "https://app.example/cb", True),
        ("https://app.example/cb", "https://app.example/cb/", False),
        ("https://app.example/cb", "https://app.example:444/cb", False),
        ("https://app.example/cb", "https://app.example/cb?x=1", False),
        ("https://app.example/cb", "https://APP.example/cb", False),
        ("http://127.0.0.1:9/cb", "http://127.0.0.1:33418/cb", True),
        ("http://127.0.0.1/cb", "http://127.0.0.1:33418/cb", True),
        ("http://localhost:9/cb?a=1", "http://localhost:10/cb?a=1", True),
        ("http://127.0.0.1:9/cb", "http://127.0.0.1:9/other", False),
        ("http://127.0.0.1:9/cb", "http://127.0.0.1:9/cb?a=1", False),
        ("http://127.0.0.1:9/cb", "http://localhost:9/cb", False),
        ("http://127.0.0.1:9/cb", "https://127.0.0.1:9/cb", False),
        ("https://127.0.0.1:9/cb", "https://127.0.0.1:10/cb", False),
    ],
)
def test_a_redirect_uri_matches_exactly_but_for_a_loopback_port(
    registered: str, given: str, matches: bool
) -> None:
    assert redirect_uri_matches(registered, given) is matches


def test_a_grant_is_named_scope_entity_and_role() -> None:
    assert grant_text("team", Grant("acme", "writer")) == "team=acme:writer"
