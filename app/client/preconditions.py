"""The headers a mutation sends: its version precondition and Idempotency-Key."""

import uuid

from app.shared.errors import etag


def new_key() -> str:
    """A fresh Idempotency-Key: random, so no two calls ever share one."""
    return f"wc-{uuid.uuid4().hex}"


def precondition(expected_version: str | None) -> dict[str, str]:
    """``If-Match`` on ``expected_version``; None asks the file not to exist."""
    if expected_version is None:
        return {"if_none_match": "*"}
    return {"if_match": etag(expected_version)}
