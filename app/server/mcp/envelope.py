"""The request id on every MCP tool failure, where the published schema allows it.

An HTTP refusal names its request at the top level of its body. A tool result's
structured content follows Tenchi's published output schema, whose error object
allows no field beside `kind`, `code`, `message` and `details`, and whose
non-application kinds allow no `details` at all. So the id goes into
`error.details.request_id` of an application error (next to `error`, `category`
and `message`, as in the HTTP body's `details`), and into the result's `_meta`
(`request_id`) of every failure, which MCP leaves to the server.
"""

import json
from typing import cast

Wire = dict[str, object]

APPLICATION_ERROR = "application_error"


def with_request_id(wire: Wire, request_id: str) -> Wire:
    """A failed tool result (wire form) naming `request_id`; `wire` is unchanged."""
    meta = cast(dict[str, object], wire.get("_meta") or {})
    named: Wire = {**wire, "_meta": {**meta, "request_id": request_id}}
    payload = _with_id_in_details(wire.get("structuredContent"), request_id)
    if payload is None:
        return named
    content = cast(list[object], wire.get("content") or [])
    text = {
        "type": "text",
        "text": json.dumps(payload, sort_keys=True, separators=(",", ":")),
    }
    return {**named, "structuredContent": payload, "content": [text, *content[1:]]}


def _with_id_in_details(
    structured: object, request_id: str
) -> dict[str, object] | None:
    if not isinstance(structured, dict):
        return None
    envelope = cast(dict[str, object], structured)
    error = envelope.get("error")
    if not isinstance(error, dict):
        return None
    failure = cast(dict[str, object], error)
    if failure.get("kind") != APPLICATION_ERROR:
        return None
    details = failure.get("details")
    held = cast(dict[str, object], details) if isinstance(details, dict) else {}
    named = {**failure, "details": {**held, "request_id": request_id}}
    return {**envelope, "error": named}
