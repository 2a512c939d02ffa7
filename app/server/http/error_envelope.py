"""The one HTTP error envelope: every refusal is code, message, details, request_id.

Memory errors already carry their payload. Refusals made before an operation runs
(Tenchi's 404, 405, 413, 415 and 422, the rate limit, idempotency keys, the body
limit, the MCP transport's Host and Origin checks) are rewritten here, in one
place, into the same shape: ``details`` gains ``error``, ``category`` and a
``message`` that says what to do, the fields to recover keep their names
(``limit``, ``retry_after``, ``errors``), and every body names its ``request_id``
(also sent as ``x-request-id``). JSON-RPC errors on ``/mcp`` are the MCP
protocol's own envelope and pass unchanged. Successful responses are not touched.
"""

import json
import re
from collections.abc import Callable
from typing import Any, cast
from uuid import uuid4

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import Message, Scope, Send
from tenchi.errors import REQUEST_ID_HEADER

from app.server.refusals import code_for_status, refusal_for, sentence

SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")
RENAMED = {"limit_bytes": "limit", "max_bytes": "limit"}


def request_id_for(scope: Scope, answered: Headers) -> str:
    """The id Tenchi answered with, else the caller's own if safe, else a new one."""
    if answered.get(REQUEST_ID_HEADER):
        return answered[REQUEST_ID_HEADER]
    inbound = Headers(scope=scope).get(REQUEST_ID_HEADER, "")
    return inbound if SAFE_REQUEST_ID.match(inbound) else uuid4().hex


def parsed(body: bytes, headers: Headers) -> dict[str, object] | None:
    """The JSON object of an error body, or None for text and other shapes."""
    if "json" not in headers.get("content-type", ""):
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return cast(dict[str, object], value) if isinstance(value, dict) else None


def recovery_fields(details: Any, headers: Headers) -> dict[str, object]:
    """What a caller needs to recover, from Tenchi's details and the headers."""
    fields: dict[str, object] = {}
    if isinstance(details, dict):
        for key, value in cast(dict[str, object], details).items():
            fields[RENAMED.get(key, key)] = value
    elif isinstance(details, list):
        fields["errors"] = details
    retry_after = headers.get("retry-after", "")
    if retry_after.isdigit():
        fields["retry_after"] = int(retry_after)
    return fields


def envelope(
    status: int, payload: dict[str, object] | None, text: str, headers: Headers
) -> dict[str, Any]:
    """The body of a refusal, rebuilt unless it already carries a category."""
    payload = payload or {}
    details = payload.get("details")
    if isinstance(details, dict) and "category" in details:
        return payload
    code = str(payload.get("code") or code_for_status(status))
    refusal = refusal_for(code, status)
    message = sentence(str(payload.get("message") or text), refusal)
    rebuilt = {"error": refusal.error, "category": str(refusal.category)}
    rebuilt |= {"message": message} | recovery_fields(details, headers)
    return {"code": code, "message": message, "details": rebuilt}


def rewritten(
    scope: Scope, start: Message, body: bytes
) -> tuple[Message, bytes, str | None]:
    """The envelope's start message and body, and its code (None: JSON-RPC)."""
    headers = MutableHeaders(raw=list(start["headers"]))
    payload = parsed(body, headers)
    if payload is not None and "jsonrpc" in payload:
        return start, body, None
    text = "" if payload is not None else body.decode("utf-8", "replace")
    answer = envelope(start["status"], payload, text, headers)
    answer["request_id"] = request_id_for(scope, headers)
    encoded = json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode()
    headers["content-type"] = "application/json"
    headers["content-length"] = str(len(encoded))
    headers[REQUEST_ID_HEADER] = answer["request_id"]
    return {**start, "headers": headers.raw}, encoded, str(answer["code"])


def enveloped(
    scope: Scope, send: Send, on_refusal: Callable[[str], None] | None = None
) -> Send:
    """``send``, holding an error response's body to send the envelope instead."""
    held: list[Message] = []
    chunks: list[bytes] = []

    async def capture(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] >= 400:
            held.append(message)
            return
        if not held or message["type"] != "http.response.body":
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            start, body, code = rewritten(scope, held[0], b"".join(chunks))
            if on_refusal is not None and code is not None:
                on_refusal(code)
            await send(start)
            await send({"type": "http.response.body", "body": body})

    return capture
