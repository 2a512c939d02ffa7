"""Typed Python client of the memory API: one method per SPEC §3 operation.

``MemoryClient`` wraps Tenchi's contract-driven ``Client``: it sends the
``If-None-Match: *`` / ``If-Match: "<version>"`` precondition derived from
``expected_version``, returns the feature's models, and raises the exceptions of
``app.server.client_errors``. Open one with ``open_memory_client`` (a URL and a
token) or, in tests, ``open_in_process_client`` (an ASGI app, lifespan included).
"""

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager

import httpx
from tenchi.client import Client, ClientAttemptObserver
from tenchi.retries import RetryPolicy, retry_policy
from tenchi.testing import open_client

from app.features.memory.contracts import (
    append_line_contract,
    delete_file_contract,
    get_memory_index_contract,
    list_area_contract,
    list_scope_contract,
    read_file_contract,
    replace_fact_contract,
    write_file_contract,
)
from app.features.memory.policy import require_path
from app.features.memory.schemas import (
    CreateOrMatchHeaders,
    Deleted,
    FileBody,
    FileListing,
    LineBody,
    MatchHeaders,
    MemoryFile,
    MemoryIndex,
    ReplaceBody,
)
from app.server.client_errors import InvalidArgumentError, translate_errors
from app.shared.errors import backend_unavailable, etag, invalid_argument, unauthorized

API_PREFIX = "/v1"
CLIENT_ERRORS = (unauthorized, backend_unavailable, invalid_argument)
"""Errors any route may raise (the API group's); pass them to a raw ``Client``."""

__all__ = [
    "CLIENT_ERRORS",
    "MemoryClient",
    "open_in_process_client",
    "open_memory_client",
    "transient_retry",
]


def transient_retry(
    *,
    max_attempts: int = 3,
    total_timeout_seconds: float = 30.0,
    max_delay_seconds: float = 5.0,
    base_delay_seconds: float = 0.2,
) -> RetryPolicy:
    """Retry 503 BACKEND_UNAVAILABLE (and gateway 502/504), honouring Retry-After.

    Mutations are retried too: each is version-guarded, so an attempt that
    already landed comes back as a VersionConflictError (whose content is what
    you wrote) rather than writing twice; a landed append_line succeeds.
    """
    return retry_policy(
        max_attempts=max_attempts,
        retry_on=(backend_unavailable.code,),
        retry_on_statuses=(502, 503, 504),
        base_delay_seconds=base_delay_seconds,
        max_delay_seconds=max_delay_seconds,
        total_timeout_seconds=total_timeout_seconds,
        allow_unsafe_methods=True,
    )


def _require_url_segment(argument: str, value: str) -> None:
    """Values a URL path cannot carry are rejected here, as the server would."""
    if value not in ("", ".", "..") and "/" not in value:
        return
    if argument == "area":
        require_path(value, "name")
    if argument == "name":
        require_path("area", value)
    raise InvalidArgumentError(
        f"Argument {argument} is invalid: {value!r} is not a granted scope; use "
        "one of the scopes granted to your token. Correct the argument and retry.",
        {
            "error": "InvalidArgumentError",
            "category": "recoverable",
            "argument": argument,
        },
    )


def _path(**segments: str) -> dict[str, str]:
    for argument, value in segments.items():
        _require_url_segment(argument, value)
    return segments


def _if_match(version: str) -> MatchHeaders:
    return MatchHeaders(if_match=etag(version))


def _put_headers(expected_version: str | None) -> CreateOrMatchHeaders:
    if expected_version is None:
        return CreateOrMatchHeaders(if_none_match="*")
    return CreateOrMatchHeaders(if_match=etag(expected_version))


class MemoryClient:
    """The seven memory operations over HTTP, typed end to end.

    Every method raises a ``WenchangError`` subclass, never a transport error.
    """

    def __init__(self, client: Client, *, retry: RetryPolicy | None = None) -> None:
        self._client = client
        self._retry = retry
        self._retry_writes = retry if retry and retry.allow_unsafe_methods else None

    async def _send[T](self, call: Callable[[], Awaitable[T]]) -> T:
        with translate_errors():
            return await call()

    async def get_memory_index(self) -> MemoryIndex:
        return await self._send(
            lambda: self._client.call(get_memory_index_contract, retry=self._retry)
        )

    async def read_file(self, scope: str, area: str, name: str) -> MemoryFile:
        return await self._send(
            lambda: self._client.call(
                read_file_contract,
                params=_path(scope=scope, area=area, name=name),
                retry=self._retry,
            )
        )

    async def list_prefix(
        self, scope: str, area: str | None = None, cursor: str | None = None
    ) -> FileListing:
        query = {"cursor": cursor} if cursor else {}
        if area is None:
            return await self._send(
                lambda: self._client.call(
                    list_scope_contract,
                    params=_path(scope=scope),
                    query=query,
                    retry=self._retry,
                )
            )
        return await self._send(
            lambda: self._client.call(
                list_area_contract,
                params=_path(scope=scope, area=area),
                query=query,
                retry=self._retry,
            )
        )

    async def write_file(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        content: str,
        description: str,
        aliases: Sequence[str],
        expected_version: str | None,
    ) -> MemoryFile:
        body = {"content": content, "description": description, "aliases": aliases}
        return await self._send(
            lambda: self._client.call(
                write_file_contract,
                params=_path(scope=scope, area=area, name=name),
                headers=_put_headers(expected_version),
                request=FileBody.model_validate(body),
                retry=self._retry_writes,
            )
        )

    async def append_line(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        line: str,
        expected_version: str,
        aliases: Sequence[str] | None = None,
        description: str | None = None,
    ) -> MemoryFile:
        body = {"line": line, "aliases": aliases, "description": description}
        return await self._send(
            lambda: self._client.call(
                append_line_contract,
                params=_path(scope=scope, area=area, name=name),
                headers=_if_match(expected_version),
                request=LineBody.model_validate(body),
                retry=self._retry_writes,
            )
        )

    async def replace_fact(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        old_string: str,
        new_string: str,
        expected_version: str,
        aliases: Sequence[str] | None = None,
        description: str | None = None,
    ) -> MemoryFile:
        body = {
            "old_string": old_string,
            "new_string": new_string,
            "aliases": aliases,
            "description": description,
        }
        return await self._send(
            lambda: self._client.call(
                replace_fact_contract,
                params=_path(scope=scope, area=area, name=name),
                headers=_if_match(expected_version),
                request=ReplaceBody.model_validate(body),
                retry=self._retry_writes,
            )
        )

    async def delete_file(
        self, scope: str, area: str, name: str, *, expected_version: str
    ) -> Deleted:
        await self._send(
            lambda: self._client.call(
                delete_file_contract,
                params=_path(scope=scope, area=area, name=name),
                headers=_if_match(expected_version),
                retry=self._retry_writes,
            )
        )
        return Deleted()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@asynccontextmanager
async def open_memory_client(
    base_url: str,
    *,
    token: str,
    retry: RetryPolicy | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    attempt_observers: Sequence[ClientAttemptObserver] = (),
) -> AsyncGenerator[MemoryClient]:
    """A client of the Wenchang at ``base_url`` (e.g. ``http://127.0.0.1:8000``)."""
    async with Client(
        base_url=base_url.rstrip("/") + API_PREFIX,
        headers=_bearer(token),
        transport=transport,
        errors=CLIENT_ERRORS,
        attempt_observers=attempt_observers,
    ) as client:
        yield MemoryClient(client, retry=retry)


@asynccontextmanager
async def open_in_process_client(
    app: Callable[..., Awaitable[None]],
    *,
    token: str,
    retry: RetryPolicy | None = None,
    attempt_observers: Sequence[ClientAttemptObserver] = (),
) -> AsyncGenerator[MemoryClient]:
    """A client calling ``app`` in this process, with its lifespan running."""
    async with open_client(
        app,
        headers=_bearer(token),
        errors=CLIENT_ERRORS,
        attempt_observers=attempt_observers,
        base_url=f"http://testserver{API_PREFIX}",
    ) as client:
        yield MemoryClient(client, retry=retry)
