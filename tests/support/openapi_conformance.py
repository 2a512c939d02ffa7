"""Every HTTP response a test receives, checked against the published ``openapi.json``.

The app passes its JSON bodies through without Tenchi's per-response re-check
(``app/server/passthrough.py``); this is where the published contract is
enforced instead. ``tests/conftest.py`` wraps httpx's ``send`` for every test,
so in-process apps, real uvicorn servers and the typed client are all covered.
A response to a documented operation must carry a declared status, the
declared required headers, a declared media type and a body valid against the
declared schema, errors included. Responses to paths the document does not
describe (``/mcp``, ``/ui/``, ``/health``) are not checked.
"""

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

import httpx
from jsonschema import Draft202012Validator

OPENAPI = Path(__file__).resolve().parents[2] / "openapi.json"
BODYLESS = frozenset({204, 304})


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and the response it got, as the wire carried them."""

    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: bytes


class Conformance:
    """The published document, compiled once; ``drift`` names every mismatch."""

    def __init__(self, document: dict[str, Any]) -> None:
        self._components = document.get("components", {})
        self._paths = [
            (_template(path), cast(dict[str, Any], item))
            for path, item in cast(dict[str, Any], document["paths"]).items()
        ]
        self._validators: dict[int, Draft202012Validator] = {}

    def operation(self, method: str, path: str) -> dict[str, Any] | None:
        for pattern, item in self._paths:
            if pattern.fullmatch(path):
                found = item.get(method.lower())
                return cast(dict[str, Any], found) if found is not None else None
        return None

    def drift(self, exchange: Exchange) -> list[str]:
        """What of ``exchange`` the document does not allow (empty: conforms)."""
        operation = self.operation(exchange.method, exchange.path)
        if operation is None:
            return []
        responses = cast(dict[str, Any], operation["responses"])
        declared = responses.get(str(exchange.status), responses.get("default"))
        if declared is None:
            return [f"status {exchange.status} is not declared ({sorted(responses)})"]
        return self._headers(declared, exchange) + self._body(declared, exchange)

    def _headers(self, declared: dict[str, Any], exchange: Exchange) -> list[str]:
        problems: list[str] = []
        for name, header in cast(dict[str, Any], declared.get("headers", {})).items():
            value = exchange.headers.get(name.lower())
            if value is None:
                if header.get("required"):
                    problems.append(f"required header {name} is missing")
                continue
            problems += self._invalid(header.get("schema", {}), value, f"header {name}")
        return problems

    def _body(self, declared: dict[str, Any], exchange: Exchange) -> list[str]:
        content = cast(dict[str, Any], declared.get("content", {}))
        if not content:
            if exchange.body and exchange.method != "HEAD":
                return [
                    f"a body was sent where none is declared: {exchange.body!r:.200}"
                ]
            return []
        if exchange.status in BODYLESS or exchange.method == "HEAD":
            return []
        media = exchange.headers.get("content-type", "").split(";")[0].strip()
        if media not in content:
            return [f"content type {media!r} is not declared ({sorted(content)})"]
        if media != "application/json":
            return []
        try:
            value = json.loads(exchange.body)
        except ValueError:
            return [f"the body is not JSON: {exchange.body!r:.200}"]
        return self._invalid(content[media].get("schema", {}), value, "body")

    def _invalid(self, schema: dict[str, Any], value: Any, what: str) -> list[str]:
        validator = self._validators.get(id(schema))
        if validator is None:
            validator = Draft202012Validator({**schema, "components": self._components})
            self._validators[id(schema)] = validator
        return [
            f"{what} at /{'/'.join(map(str, error.absolute_path))}: {error.message}"
            for error in validator.iter_errors(value)  # pyright: ignore[reportUnknownMemberType]
        ]


def _template(path: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}/]+\})", path)
    pattern = "".join(
        "[^/]+" if part.startswith("{") else re.escape(part) for part in parts
    )
    return re.compile(pattern)


@cache
def published() -> Conformance:
    """The checker of the repository's ``openapi.json``."""
    return Conformance(json.loads(OPENAPI.read_text()))


def report(exchange: Exchange, problems: list[str]) -> str:
    listed = "\n  ".join(problems)
    return (
        f"{exchange.method} {exchange.path} -> {exchange.status} drifts from "
        f"openapi.json:\n  {listed}"
    )


DRIFTS: list[str] = []
"""Drifts seen since the current test started (the conftest fails it on any)."""


def exchange_of(response: httpx.Response) -> Exchange:
    request = response.request
    try:
        body = response.content
    except httpx.ResponseNotRead:
        body = b""  # a stream the caller reads itself: status and headers only
    return Exchange(
        method=request.method,
        path=request.url.raw_path.split(b"?")[0].decode("ascii"),
        status=response.status_code,
        headers={name.lower(): value for name, value in response.headers.items()},
        body=body,
    )


def record(response: httpx.Response) -> None:
    """Note how ``response`` drifts from openapi.json, if it does."""
    exchange = exchange_of(response)
    problems = published().drift(exchange)
    if problems:
        DRIFTS.append(report(exchange, problems))
