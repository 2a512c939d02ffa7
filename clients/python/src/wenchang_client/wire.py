"""What goes on the wire and what comes back: a call's request, its typed
answer, and every failure as the ``WenchangError`` of its code.

``error_from_payload`` names an error by its code: the class in
``wenchang_client.errors`` that declares that ``code`` (an unknown or malformed
one is ``InternalError``). Every error envelope the server sends, its own or
its framework's, is read the same way; a lost connection or a timeout is
``BackendUnavailableError``.
"""

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from wenchang_client import errors
from wenchang_client.errors import (
    BackendUnavailableError,
    InternalError,
    WenchangError,
)

__all__ = ["Call", "error_from_payload"]

API_PREFIX = "/v1"


@dataclass(frozen=True, slots=True)
class Call[T: BaseModel]:
    """One HTTP request of the API and the model of its answer."""

    method: str
    path: str
    result: type[T]
    query: Mapping[str, str] = field(default_factory=dict[str, str])
    body: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict[str, str])

    @property
    def mutation(self) -> bool:
        return self.method not in ("GET", "HEAD")


def path_of(*segments: str) -> str:
    """The API path of ``segments``, each percent-encoded as one segment."""
    return API_PREFIX + "/" + "/".join(quote(segment, safe="") for segment in segments)


def precondition(expected_version: str | None) -> dict[str, str]:
    """``If-Match`` on ``expected_version``; None asks the file not to exist."""
    if expected_version is None:
        return {"If-None-Match": "*"}
    return {"If-Match": f'"{expected_version}"'}


def new_key() -> str:
    """A fresh Idempotency-Key: random, so no two calls ever share one."""
    return f"wc-{uuid.uuid4().hex}"


def _classes_by_code() -> dict[str, type[WenchangError]]:
    """Every exported class that names a code of its own (not the categories)."""
    exported: list[object] = [getattr(errors, name) for name in errors.__all__]
    return {
        cls.code: cls
        for cls in exported
        if isinstance(cls, type)
        and issubclass(cls, WenchangError)
        and "code" in vars(cls)
    }


_BY_CODE = _classes_by_code()


def _as_payload(details: object) -> dict[str, Any]:
    if isinstance(details, dict):
        return dict(cast(dict[str, Any], details))
    if isinstance(details, list):
        return {"errors": cast(list[Any], details)}
    return {}


def error_from_payload(
    code: str,
    message: str,
    details: object,
    *,
    retry_after: str | None = None,
) -> WenchangError:
    """The exception for an error ``code``, its payload and its ``Retry-After``."""
    payload = _as_payload(details)
    text = payload.get("message")
    cls = _BY_CODE.get(code, InternalError)
    try:
        error = cls(text if isinstance(text, str) else message, payload)
    except TypeError:
        return InternalError(f"Wenchang sent a malformed {code} error: {message}")
    if retry_after is not None and retry_after.isdigit():
        error.retry_after_seconds = float(retry_after)
    return error


def error_of(response: httpx.Response) -> WenchangError | None:
    """The error a response carries, None for a success (or a 304)."""
    if response.status_code < 400:
        return None
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    envelope = cast(dict[str, Any], body) if isinstance(body, dict) else {}
    code, message = envelope.get("code"), envelope.get("message")
    if not isinstance(code, str) or not isinstance(message, str):
        return InternalError(
            f"Wenchang answered unexpectedly: HTTP {response.status_code}."
        )
    retry_after = response.headers.get("retry-after")
    return error_from_payload(
        code, message, envelope.get("details"), retry_after=retry_after
    )


def transport_error(exc: httpx.TransportError) -> BackendUnavailableError:
    """A request that got no answer: a timeout or an unreachable server."""
    if isinstance(exc, httpx.TimeoutException):
        reason, message = "timeout", "Wenchang did not answer in time; retry the call."
    else:
        reason = "unavailable"
        message = f"Wenchang is unreachable ({type(exc).__name__}); retry the call."
    details = {"error": "BackendUnavailableError", "category": "transient"}
    error = BackendUnavailableError(message, details | {"reason": reason})
    error.__cause__ = exc
    return error


def decode[T: BaseModel](call: Call[T], response: httpx.Response) -> T:
    """The typed answer of a successful response (a 204 is the model's default)."""
    try:
        if response.status_code == 204:
            return call.result()
        return call.result.model_validate_json(response.content)
    except ValidationError as exc:
        raise InternalError(
            f"Wenchang answered {call.method} {call.path} with a body this "
            f"client does not read: {exc.error_count()} problem(s)."
        ) from exc


def request_of(call: Call[Any], key: str | None) -> dict[str, Any]:
    """The keyword arguments of ``httpx`` ``request`` for one attempt."""
    headers = dict(call.headers)
    if key is not None:
        headers["Idempotency-Key"] = key
    request: dict[str, Any] = {"headers": headers}
    if call.query:
        request["params"] = dict(call.query)
    if call.body is not None:
        request["json"] = dict(call.body)
    return request
