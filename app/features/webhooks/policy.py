"""Who may manage webhooks (owners), and which URLs they may name."""

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from app.features.memory.policy import require_grant
from app.shared.errors import invalid_argument_error, webhook_role_required_error
from app.shared.identity import Grant, Identity

OWNER_ROLE = "owner"
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


@dataclass(frozen=True, slots=True)
class WebhookPolicy:
    """``trusted_hosts`` (host keys: lower case, no brackets) may be plain http
    on any address; retries wait ``retry_base`` seconds, doubling, until
    failures last ``retry_window``. ``trusting`` makes one from hosts as
    configured."""

    trusted_hosts: frozenset[str] = frozenset()
    retry_base: float = 5.0
    retry_window: float = 86_400.0

    def is_trusted(self, host: str) -> bool:
        return host_key(host) in self.trusted_hosts


def trusting(
    hosts: Iterable[str], *, retry_base: float = 5.0, retry_window: float = 86_400.0
) -> WebhookPolicy:
    """The policy trusting ``hosts`` whatever their case: a host configured as
    "Hooks.Internal" or "[::1]" is the URL's "hooks.internal", "::1"."""
    keys = frozenset(host_key(host) for host in hosts)
    return WebhookPolicy(keys, retry_base=retry_base, retry_window=retry_window)


def host_key(host: str) -> str:
    """A host as trusted hosts are compared: trimmed, lower case, unbracketed."""
    return host.strip().lower().strip("[]")


def require_owner(identity: Identity, scope: str) -> Grant:
    grant = require_grant(identity, scope)
    if grant.role != OWNER_ROLE:
        raise webhook_role_required_error(scope)
    return grant


def is_public_address(host: str) -> bool | None:
    """Whether an IP literal is public; None for a name."""
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    return address.is_global and not address.is_multicast


def require_destination(url: str, policy: WebhookPolicy) -> str:
    """The URL, if deliveries may go there: https to a public host, or any
    http(s) URL of a trusted host. Names are resolved again at each delivery."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host:
        raise _refused("use an http(s) URL with a host, e.g. https://example.com/hook")
    if parts.username or parts.password:
        raise _refused("put no credentials in the URL; check the signature instead")
    if policy.is_trusted(host):
        return url
    if parts.scheme != "https":
        raise _refused(
            "use https (plain http only for hosts in WENCHANG_WEBHOOK_TRUSTED_HOSTS)"
        )
    if host.lower().rstrip(".") in LOCAL_NAMES or is_public_address(host) is False:
        raise _refused(
            "the host is a loopback, private or link-local address; only hosts in "
            "WENCHANG_WEBHOOK_TRUSTED_HOSTS may be"
        )
    return url


def _refused(detail: str) -> Exception:
    return invalid_argument_error("url", detail)
