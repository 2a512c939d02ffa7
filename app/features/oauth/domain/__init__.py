"""Pure OAuth rules: secrets and their digests, PKCE, scopes, redirect URIs."""

import base64
import hashlib
import hmac
import ipaddress
import re
import secrets
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from app.features.memory.policy import READ_ONLY_ROLE
from app.shared.identity import Grant

READ = "memory.read"
WRITE = "memory.write"
SCOPES = (READ, WRITE)
__all__ = ["READ_ONLY_ROLE"]
CODE_TTL_SECONDS = 60
REFRESH_TTL_SECONDS = 90 * 86_400
ACCESS_PREFIX = "wco_"
REFRESH_PREFIX = "wcr_"
CODE_PREFIX = "wcc_"
CLIENT_PREFIX = "wcl_"
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
PKCE_VALUE = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
"""RFC 7636 (4.1, 4.2): a verifier and a challenge are ``43*128unreserved``."""


def new_secret(prefix: str) -> str:
    """A bearer secret of 256 random bits, its kind readable from its prefix."""
    return prefix + secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    """What the store keeps of a secret: its SHA-256, never the secret."""
    return hashlib.sha256(f"wenchang-oauth\0{secret}".encode()).hexdigest()


def client_token_id(client_id: str) -> str:
    """The non-secret id an OAuth client's calls carry in the audit log."""
    return "oauth-" + hashlib.sha256(client_id.encode()).hexdigest()[:16]


def is_pkce_value(text: str) -> bool:
    """Whether ``text`` may be a code verifier or challenge."""
    return PKCE_VALUE.fullmatch(text) is not None


def pkce_matches(verifier: str, challenge: str) -> bool:
    """RFC 7636 S256: BASE64URL(SHA256(verifier)) without padding == challenge."""
    if not is_pkce_value(verifier):
        return False
    hashed = hashlib.sha256(verifier.encode()).digest()
    computed = base64.urlsafe_b64encode(hashed).rstrip(b"=")
    # bytes, not str: compare_digest raises on a str holding non-ASCII text
    return hmac.compare_digest(computed, challenge.encode())


def parse_scopes(text: str | None) -> tuple[str, ...] | None:
    """The requested scopes in our order; None if one is unknown. None or
    empty text asks for both."""
    if not text or not text.strip():
        return SCOPES
    asked = set(text.split())
    if not asked <= set(SCOPES):
        return None
    return tuple(scope for scope in SCOPES if scope in asked)


def effective_grants(
    grants: Mapping[str, Grant], scopes: Sequence[str]
) -> dict[str, Grant]:
    """The grants a token acts with: every one read-only without memory.write."""
    if WRITE in scopes:
        return dict(grants)
    return {
        scope: Grant(grant.entity_id, READ_ONLY_ROLE) for scope, grant in grants.items()
    }


def is_loopback_host(host: str) -> bool:
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_uri_problem(uri: str) -> str | None:
    """Why a client may not register ``uri``; None if it may (https, or
    loopback http, never a fragment)."""
    parts = urlsplit(uri)
    if parts.fragment or not parts.hostname:
        return "a redirect URI needs a host and no fragment"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and is_loopback_host(parts.hostname):
        return None
    return "a redirect URI must be https, or http on a loopback address"


def redirect_uri_matches(registered: str, given: str) -> bool:
    """Exact match; on loopback http the port may differ (RFC 8252 §7.3)."""
    if registered == given:
        return True
    mine, theirs = urlsplit(registered), urlsplit(given)
    if mine.scheme != "http" or not is_loopback_host(mine.hostname or ""):
        return False
    same = (mine.scheme, mine.hostname, mine.path, mine.query)
    return same == (theirs.scheme, theirs.hostname, theirs.path, theirs.query)


def grant_text(scope: str, grant: Grant) -> str:
    """How a grant is named in a form and a listing: ``scope=entity:role``."""
    return f"{scope}={grant.entity_id}:{grant.role}"
