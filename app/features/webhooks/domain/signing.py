"""Standard Webhooks: secrets, message ids, signatures and the delivery body."""

import base64
import hashlib
import hmac
import json
import secrets

from pydantic import BaseModel

SECRET_PREFIX = "whsec_"
EVENT_TYPE = "memory.changed"


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def new_endpoint_id() -> str:
    return "wh_" + secrets.token_hex(12)


def message_id(endpoint_id: str, seq: int) -> str:
    """The same for every attempt of one change to one endpoint, in every
    replica, so a receiver can drop a repeat (``webhook-id``)."""
    return f"msg_{endpoint_id}_{seq}"


def signature(secret: str, message: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256>`` of ``id.timestamp.body`` (``webhook-signature``)."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def delivery_body(change: BaseModel, timestamp: str) -> bytes:
    payload = {"type": EVENT_TYPE, "timestamp": timestamp, "data": change.model_dump()}
    return json.dumps(payload, separators=(",", ":")).encode()


def signed_headers(
    secret: str, message: str, timestamp: int, body: bytes
) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "webhook-id": message,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, message, timestamp, body),
    }
