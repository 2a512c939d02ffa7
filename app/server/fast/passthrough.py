"""The routes as served: every JSON body serialised once and passed through.

Tenchi re-checks each JSON body it emits (validate, dump, JSON Schema in pure
Python, validate again: ~73 us per file, ~38 ms per 500-entry index), and on a
passthrough response that declares headers it regenerates the headers' JSON
Schema on every request (~260 us, more than the check it skips). Our bodies
are the declared models' own serialisation, so the app serves twins of the
declared routes: the same contracts, each JSON response a passthrough that
declares no headers, its declared headers (the ETag) added as it is sent.

The declared routes stay the published contract (``openapi.json``, the typed
client). ``tests/support/openapi_conformance.py`` validates every response the
HTTP suites receive (status, headers, body, errors included) against
``openapi.json``, so a drift fails CI instead of costing every request.
"""

import inspect
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from pydantic import TypeAdapter
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from tenchi.responses import PresentedResponse, ResponseDef, present
from tenchi.routes import Route, RouteGroup, route, route_group

from app.server.declarations import AnyContract, AnyResponse

JSON = "application/json"
Presenter = Callable[[object], PresentedResponse]


class Serialised(Response):
    """A body serialised once; its declared headers join it when it is sent.

    Added at send time so Tenchi's passthrough check sees no header to check
    (that check rebuilds a JSON Schema per request); the values come from our
    own header models.
    """

    def __init__(
        self,
        body: bytes,
        status: int,
        headers: Mapping[str, str],
        media_type: str | None = JSON,
    ) -> None:
        super().__init__(body, status_code=status, media_type=media_type)
        self._late = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in headers.items()
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.raw_headers.extend(self._late)
        self._late = []
        await super().__call__(scope, receive, send)


def served(routes: RouteGroup) -> RouteGroup:
    """``routes`` with every JSON response passed through (the rest unchanged)."""
    return route_group(*(_served(item) for item in routes))


def _carries_json(definition: AnyResponse) -> bool:
    return definition.body is not None and definition.media_type == JSON


def _headers_only(definition: AnyResponse) -> bool:
    # A bodiless answer with declared headers (the index's 304): Tenchi would
    # validate and render its headers on every response, at the cost of a file read.
    return definition.body is None and definition.headers is not None


def _twin(definition: AnyResponse) -> AnyResponse:
    """The definition served: a passthrough that declares no headers."""
    if not (_carries_json(definition) or _headers_only(definition)):
        return definition
    return replace(definition, headers=None, passthrough=True)


def _served(item: Route) -> Route:
    contract = item.contract
    if contract.responses:
        twins = tuple(_twin(d) for d in contract.responses)
        if twins == contract.responses:
            return item
        assert item.presenter is not None
        presenter = _presenting(contract.responses, twins, item.presenter)
        return _bound(replace(contract, responses=twins), item, presenter)
    if contract.response is None or contract.response_media_type != JSON:
        return item
    declared: AnyResponse = ResponseDef(
        body=contract.response,
        status=contract.status,
        headers=cast(Any, contract.response_headers),
    )
    twin = _twin(declared)
    presenter = _projecting(declared, twin, item.response_headers)
    singular = replace(contract, responses=(twin,), response_headers=None)
    return _bound(singular, item, presenter)


def _bound(contract: AnyContract, item: Route, presenter: Presenter) -> Route:
    returns = inspect.signature(item.use_case).return_annotation
    vars(presenter)["__signature__"] = inspect.Signature(
        [
            inspect.Parameter(
                "result", inspect.Parameter.POSITIONAL_ONLY, annotation=returns
            )
        ],
        return_annotation=PresentedResponse,
    )
    return route(contract, item.use_case, present=presenter)


class _Wire:
    """How one declared definition's body and headers become bytes and strings."""

    def __init__(self, definition: AnyResponse) -> None:
        self.status = definition.status
        self.media_type = definition.media_type
        # The adapters' core serialisers, called directly: ``TypeAdapter``'s
        # own dump methods only forward to them, at a few us per response.
        self._body = (
            None
            if definition.body is None
            else TypeAdapter[Any](cast(Any, definition.body)).serializer
        )
        self._headers = (
            None
            if definition.headers is None
            else TypeAdapter[object](definition.headers).serializer
        )

    def body(self, value: object) -> bytes:
        if self._body is None:
            return b""
        return self._body.to_json(value, by_alias=True, warnings="error")

    def headers(self, value: object) -> dict[str, str]:
        if self._headers is None or value is None:
            return {}
        dumped = self._headers.to_python(
            value, mode="json", by_alias=True, exclude_none=True
        )
        return {str(name): str(text) for name, text in dumped.items()}


def _projecting(
    declared: AnyResponse,
    twin: AnyResponse,
    project: Callable[[object], object] | None,
) -> Presenter:
    """A singular route's presenter: its result, its projected headers."""
    wire = _Wire(declared)

    def presenter(result: object) -> PresentedResponse:
        headers = wire.headers(project(result) if project is not None else None)
        body = Serialised(wire.body(result), wire.status, headers)
        return present(twin, response=body)

    return presenter


def _presenting(
    declared: tuple[AnyResponse, ...],
    twins: tuple[AnyResponse, ...],
    chosen: Presenter,
) -> Presenter:
    """A presenter that serves the twin of what the route's own presenter chose."""
    served_as = {
        id(d): (twin, _Wire(d))
        for d, twin in zip(declared, twins, strict=True)
        if twin is not d
    }

    def presenter(result: object) -> PresentedResponse:
        presented = chosen(result)
        found = served_as.get(id(presented.definition))
        if found is None:
            return presented
        twin, wire = found
        if presented.response is not None:
            return present(twin, response=_reserved(presented.response))
        headers = wire.headers(presented.headers)
        body = Serialised(
            wire.body(presented.body), wire.status, headers, wire.media_type
        )
        return present(twin, response=body)

    return presenter


def _reserved(response: Response) -> Serialised:
    """A passthrough response the route built itself, its headers sent late."""
    headers = {
        name: value
        for name, value in response.headers.items()
        if name not in ("content-length", "content-type")
    }
    return Serialised(bytes(response.body), response.status_code, headers)
