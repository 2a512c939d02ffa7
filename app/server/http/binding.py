"""The binder: each feature's declared `Binding` made into the route that serves it.

Path params, query and body become the operation's request; precondition
headers become its ``expected_version``; an ``Idempotency-Key`` replays the
first result; a contract that declares ``VersionHeaders`` answers the file's
ETag. The operation itself never sees a header.
"""

import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, TypeAdapter
from tenchi.idempotency import fingerprint, run_idempotently
from tenchi.responses import PresentedResponse
from tenchi.routes import Route, RouteGroup, route, route_group

from app.features.memory.domain.keys import entity_prefix, file_key
from app.features.memory.ports.request_records import record_fingerprint, record_scope
from app.features.memory.routes.headers import expected_version, version_headers
from app.features.memory.schemas import (
    CreateOrMatchHeaders,
    MatchHeaders,
    MemoryFile,
    ReadFile,
    VersionHeaders,
)
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext, mark_audited
from app.server.declarations import AnyContract
from app.shared.bindings import Binding

IDEMPOTENCY_RETENTION_SECONDS = 600
"""How long a completed result is replayed: retries come within minutes."""
IDEMPOTENCY_LEASE_SECONDS = 60
IDEMPOTENCY_NAMESPACE = "memory"
"""One namespace for every operation: a key a caller reuses for another
operation is another request (IDEMPOTENCY_CONFLICT), never a fresh key."""


class Receipt(BaseModel):
    """What an Idempotency-Key record keeps: the version a mutation produced.

    Never file content: a replay reads the file back, so no copy of content
    outlives a delete or a purge in the request store.
    """

    version: str | None = None


@dataclass(frozen=True, slots=True)
class Answered:
    """An operation's result beside the request it answered, for a presenter."""

    request: Any
    result: Any


def bind[RequestT: BaseModel, ResultT](
    contract: AnyContract,
    operation: Callable[[RequestT, AppContext], Awaitable[ResultT]],
    *,
    present: Callable[[RequestT, ResultT], PresentedResponse] | None = None,
    operation_id: str | None = None,
) -> Route:
    """The route serving ``operation`` under ``contract``.

    ``present`` sees the request beside the result, for contracts with several
    responses (PUT answers 201 to a create and 200 to a replace).
    ``operation_id`` is the OpenAPI operationId, by default the contract's name.
    """
    signature = inspect.signature(operation)
    request_type: type[RequestT] = signature.parameters["request"].annotation
    result_type: type[ResultT] = signature.return_annotation
    answers_nothing = contract.response is None and present is None
    name = operation.__name__
    mutates = contract.method != "GET"
    validate = request_type.model_validate

    async def handle(**inputs: Any) -> Any:
        context: AppContext = inputs.pop("context")
        headers: MatchHeaders | CreateOrMatchHeaders | None = inputs.pop(
            "headers", None
        )
        fields = _fields(inputs.values())
        built: list[RequestT] = []

        async def call(context: AppContext) -> ResultT:
            if headers is not None:
                fields["expected_version"] = expected_version(headers)
            request = validate(fields)
            built.append(request)
            if headers is None or headers.idempotency_key is None:
                return await operation(request, context)  # no key, nothing to replay
            return await run_once(
                context,
                operation=contract.name,
                key=headers.idempotency_key,
                request=request,
                result_type=result_type,
                run=lambda: operation(request, context),
            )

        # Audited around the header checks too, so a 428 is recorded as refused.
        result = await context.audited(name, fields, call, mutates=mutates)
        if present is not None:
            return Answered(built[0], result)
        return None if answers_nothing else result

    handle.__name__ = handle.__qualname__ = operation_id or contract.name
    mark_audited(handle, name)
    vars(handle)["__signature__"] = _handler_signature(
        contract, Answered if present is not None else contract.response
    )
    if present is not None:
        return route(contract, handle, present=_presenter(present))
    projector = version_headers if contract.response_headers is VersionHeaders else None
    return route(contract, handle, response_headers=projector)


def bound(*bindings: Binding) -> RouteGroup:
    """The routes serving what a feature declared."""
    return route_group(
        *(
            bind(
                b.contract,
                b.operation,
                present=b.present,
                operation_id=b.operation_id,
            )
            for b in bindings
        )
    )


def _fields(models: Iterable[BaseModel]) -> dict[str, object]:
    """The fields of the path, query and body models, as one request's input."""
    fields: dict[str, object] = {}
    for model in models:
        # Their attribute dicts, read directly: iterating a model costs a
        # generator step per field.
        fields.update(model.__dict__)
        fields.update(model.model_extra or {})
        if (
            "expires_at" in model.__dict__
            and "expires_at" not in model.model_fields_set
        ):
            del fields["expires_at"]  # omitted keeps the expiry; null clears it
    return fields


def _handler_signature(contract: AnyContract, returns: object) -> inspect.Signature:
    """What Tenchi checks a route's use case against: the contract's own types."""
    inputs = {
        "params": contract.params,
        "query": contract.query,
        "headers": contract.headers,
        "request": contract.request,
        "context": AppContext,
    }
    return inspect.Signature(
        [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind)
            for name, kind in inputs.items()
            if kind is not None
        ],
        return_annotation=returns,
    )


def _presenter[RequestT, ResultT](
    present: Callable[[RequestT, ResultT], PresentedResponse],
) -> Callable[[Answered], PresentedResponse]:
    def presenter(answered: Answered) -> PresentedResponse:
        return present(answered.request, answered.result)

    return presenter


async def run_once[ResultT](
    context: AppContext,
    *,
    operation: str,
    key: str,
    request: BaseModel,
    result_type: type[ResultT],
    run: Callable[[], Awaitable[ResultT]],
) -> ResultT:
    """Run ``run`` at most once per caller and Idempotency-Key.

    A retry with the same key and request gets the first result back instead of
    applying again; the same key with another request is IDEMPOTENCY_CONFLICT,
    and one still running is IDEMPOTENCY_IN_PROGRESS.
    """
    fresh: list[ResultT] = []

    async def first_run() -> Receipt:
        result = await run()
        fresh.append(result)
        version = result.version if isinstance(result, MemoryFile) else None
        return Receipt(version=version)

    kept = await run_idempotently(
        context.idempotency,
        namespace=IDEMPOTENCY_NAMESPACE,
        scope=record_scope(_entity_of(request, context), context.caller or "local"),
        key=key,
        fingerprint=_fingerprint(operation, request, context),
        result_type=Receipt,
        operation=first_run,
        completed_ttl=IDEMPOTENCY_RETENTION_SECONDS,
        reservation_ttl=IDEMPOTENCY_LEASE_SECONDS,
    )
    if fresh:
        return fresh[0]
    return await _replay(kept, request, result_type, context)


def _entity_id(request: BaseModel, context: AppContext) -> str | None:
    """The caller's entity in the scope ``request`` names; None when the caller
    holds no grant for it (the operation then refuses the call, and its record
    is abandoned)."""
    scope: str = getattr(request, "scope", "")
    grant = None if context.identity is None else context.identity.grants.get(scope)
    return None if grant is None else grant.entity_id


def _entity_of(request: BaseModel, context: AppContext) -> str:
    """The entity prefix of the file ``request`` names, so a purge of the entity
    erases the record ("" without a grant)."""
    entity_id = _entity_id(request, context)
    scope: str = getattr(request, "scope", "")
    return "" if entity_id is None else entity_prefix(scope, entity_id)


def _named_keys(request: BaseModel, context: AppContext) -> list[str]:
    """The storage keys of the files ``request`` names (a rename: both), so a
    sweep that erases one of them erases the record."""
    entity_id = _entity_id(request, context)
    values = request.model_dump(include=_LOCATION | _NEW_LOCATION.keys())
    scope = values.get("scope")
    paths = [("area", "name"), ("new_area", "new_name")]
    named = [(values.get(area), values.get(name)) for area, name in paths]
    return [
        file_key(scope, entity_id, area, name)
        for area, name in named
        if isinstance(scope, str) and entity_id is not None
        if isinstance(area, str) and isinstance(name, str)
    ]


def _fingerprint(operation: str, request: BaseModel, context: AppContext) -> str:
    digest = fingerprint(request, annotation=type(request))
    return record_fingerprint(operation, _named_keys(request, context), digest)


async def _replay[ResultT](
    receipt: Receipt,
    request: BaseModel,
    result_type: type[ResultT],
    context: AppContext,
) -> ResultT:
    """The answer to a retry whose first run landed, rebuilt from its receipt.

    A file result is read back: while the file is still at the receipt's
    version that is exactly the first answer; if it has moved on since, the
    retry gets the file as it stands now (a consistent content and version).
    A result without a file (a delete) carries nothing to read back.
    """
    if receipt.version is None:
        return TypeAdapter(result_type).validate_python({})
    fields = request.model_dump(include=_LOCATION | _NEW_LOCATION.keys())
    for moved, field in _NEW_LOCATION.items():  # a rename's file is at its new path
        if moved in fields:
            fields[field] = fields.pop(moved)
    where = ReadFile.model_validate(fields)
    return cast(ResultT, await read_file(where, context))


_LOCATION = {"scope", "area", "name"}
_NEW_LOCATION = {"new_area": "area", "new_name": "name"}
