"""Signed, expiring form fields: what the consent page hands back to us.

The consent page keeps no server-side session: step one's answer carries the
signed-in person's grants, sealed with a key only this server holds and bound
to the authorization request, so a form from another origin or for another
request is refused.
"""

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any, cast

SEAL_SECONDS = 600


def _mac(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def seal(key: bytes, payload: Mapping[str, object], *, now: float) -> str:
    body = json.dumps({**payload, "exp": now + SEAL_SECONDS}, sort_keys=True).encode()
    text = base64.urlsafe_b64encode(body).decode()
    return f"{text}.{_mac(key, body)}"


def unseal(key: bytes, sealed: str, *, now: float) -> dict[str, Any] | None:
    """The payload, if this server sealed it and it has not expired."""
    text, _, mac = sealed.partition(".")
    try:
        body = base64.urlsafe_b64decode(text.encode())
    except ValueError:
        return None
    # bytes, not str: compare_digest raises on a str holding non-ASCII text
    if not hmac.compare_digest(_mac(key, body).encode(), mac.encode()):
        return None
    payload = cast(dict[str, Any], json.loads(body))
    if not isinstance(payload.get("exp"), float | int) or payload["exp"] <= now:
        return None
    return payload


def request_fingerprint(params: Mapping[str, str]) -> str:
    """Binds a sealed field to one authorization request's parameters."""
    text = json.dumps(sorted(params.items()))
    return hashlib.sha256(text.encode()).hexdigest()
