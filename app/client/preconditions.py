"""The headers a mutation sends: its version precondition and Idempotency-Key."""

import uuid

from app.features.memory.schemas import CreateOrMatchHeaders, MatchHeaders
from app.shared.errors import etag


def new_key() -> str:
    """A fresh Idempotency-Key: random, so no two calls ever share one."""
    return f"wc-{uuid.uuid4().hex}"


def create_or_match(expected_version: str | None) -> CreateOrMatchHeaders:
    if expected_version is None:
        return CreateOrMatchHeaders(if_none_match="*")
    return CreateOrMatchHeaders(if_match=etag(expected_version))


def if_match(version: str) -> MatchHeaders:
    return MatchHeaders(if_match=etag(version))
