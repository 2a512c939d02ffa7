"""The asynchronous typed client: ``AsyncMemoryClient``, one method per operation.

Each method builds its request in ``wenchang_client.calls`` and sends it here:
a mutation with the ``If-None-Match: *`` / ``If-Match`` its ``expected_version``
asks for and one Idempotency-Key that every retry of the call reuses. Every
failure is raised as a ``WenchangError`` subclass, never a transport error.
"""

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Literal, Self

import httpx
from pydantic import BaseModel

from wenchang_client import calls
from wenchang_client.models import (
    AuditEvents,
    ChangesPage,
    Deleted,
    FileListing,
    FileVersion,
    MemoryFile,
    MemoryIndex,
    MemoryToolAnswer,
    SearchResults,
    VersionListing,
    Webhook,
    WebhookCreated,
)
from wenchang_client.retries import AttemptObserver, RetryBudget, RetryPolicy
from wenchang_client.wire import Call, decode, error_of, new_key, request_of
from wenchang_client.wire import transport_error as no_answer

__all__ = ["AsyncMemoryClient"]


class AsyncMemoryClient:
    """Wenchang's HTTP API at ``base_url`` (e.g. ``http://127.0.0.1:8000``).

    Use it as ``async with AsyncMemoryClient(url, token) as client:`` or call
    ``aclose()``. ``retry`` (e.g. ``transient_retry()``) is opt-in;
    ``transport`` replaces the network, e.g. ``httpx.ASGITransport(app=app)``.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        attempt_observers: Sequence[AttemptObserver] = (),
        timeout_seconds: float = 30.0,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            transport=transport,
            timeout=timeout_seconds,
        )
        self._retry = retry
        self._observers = tuple(attempt_observers)
        # The last index and its ETag; a copy, so a caller editing the model it
        # was given cannot change what a later 304 returns.
        # The held index of each view (with expired files or not): the two
        # have tags of their own, so neither is revalidated with the other's.
        self._index: dict[bool, tuple[str, MemoryIndex]] = {}

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _exchange(self, call: Call[BaseModel]) -> httpx.Response:
        key = new_key() if call.mutation else None  # one per call, every retry
        budget = RetryBudget(
            self._retry,
            mutation=call.mutation,
            observers=self._observers,
            method=call.method,
            path=call.path,
        )
        while True:
            try:
                response = await self._http.request(
                    call.method, call.path, **request_of(call, key)
                )
            except httpx.TransportError as exc:
                error = no_answer(exc)
                delay = budget.after(error, None, transport_failure=True)
                if delay is None:
                    raise error from exc
            else:
                error = error_of(response)
                delay = budget.after(error, response.status_code)
                if error is None:
                    return response
                if delay is None:
                    raise error
            await asyncio.sleep(delay)

    async def _send[T: BaseModel](self, call: Call[T]) -> T:
        return decode(call, await self._exchange(call))

    async def get_memory_index(self, *, include_expired: bool = False) -> MemoryIndex:
        """The caller's index, revalidated: unchanged, it costs a 304 and no body.
        ``include_expired`` (owners of every granted scope) lists expired files."""
        held = self._index.get(include_expired)
        call = calls.memory_index(held[0] if held else None, include_expired)
        response = await self._exchange(call)
        if response.status_code == 304 and held is not None:
            return held[1].model_copy(deep=True)
        index = decode(call, response)
        etag = response.headers.get("etag")
        if etag:
            self._index[include_expired] = (etag, index.model_copy(deep=True))
        else:
            self._index.pop(include_expired, None)
        return index

    async def read_file(
        self, scope: str, area: str, name: str, *, include_expired: bool = False
    ) -> MemoryFile:
        """The file; ``include_expired`` (scope owners) also reads an expired one."""
        return await self._send(calls.read_file(scope, area, name, include_expired))

    async def list_prefix(
        self,
        scope: str,
        area: str | None = None,
        cursor: str | None = None,
        *,
        include_expired: bool = False,
    ) -> FileListing:
        call = calls.list_prefix(scope, area, cursor, include_expired)
        return await self._send(call)

    async def search_memory(
        self,
        query: str,
        *,
        scope: str | None = None,
        area: str | None = None,
        limit: int = calls.SEARCH_LIMIT_DEFAULT,
        cursor: str | None = None,
        include_expired: bool = False,
    ) -> SearchResults:
        """Files of the caller's scopes holding every word of ``query``, best first
        (``include_expired``: expired files too, for owners of every scope)."""
        call = calls.search_memory(query, scope, area, limit, cursor, include_expired)
        return await self._send(call)

    async def read_changes(
        self, scope: str, *, after: str | None = None
    ) -> ChangesPage:
        """Changes of the caller's files in ``scope`` after the cursor ``after``
        (None: from the oldest kept), oldest first; CursorExpiredError when
        they are no longer kept."""
        return await self._send(calls.read_changes(scope, after))

    async def add_webhook(
        self, scope: str, url: str, *, description: str = ""
    ) -> WebhookCreated:
        """Register ``url`` for the caller's changes in ``scope`` (owners only);
        the answer's ``secret`` is shown only now."""
        return await self._send(calls.add_webhook(scope, url, description))

    async def list_webhooks(self, scope: str) -> list[Webhook]:
        """The caller's webhooks in ``scope``, each with its delivery state."""
        return (await self._send(calls.list_webhooks(scope))).webhooks

    async def enable_webhook(self, scope: str, webhook_id: str) -> Webhook:
        """Resume a failed webhook with the change it failed on."""
        return await self._send(calls.enable_webhook(scope, webhook_id))

    async def remove_webhook(self, scope: str, webhook_id: str) -> None:
        """Remove a webhook; an unknown id raises NotFoundError."""
        await self._send(calls.remove_webhook(scope, webhook_id))

    async def read_audit(
        self,
        scope: str | None = None,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        operation: str | None = None,
        area: str | None = None,
        name: str | None = None,
        cursor: str | None = None,
    ) -> AuditEvents:
        """One page of audit events on the caller's memory, newest first."""
        call = calls.read_audit(scope, since, until, operation, area, name, cursor)
        return await self._send(call)

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
        expires_at: datetime | Literal["never"] | None = None,
        ttl_seconds: int | None = None,
    ) -> MemoryFile:
        """Create (``expected_version=None``) or replace the file.

        The file expires at ``expires_at`` or ``ttl_seconds`` from now;
        ``expires_at="never"`` clears an expiry; neither keeps the stored one.
        """
        expiry = calls.Expiry(expires_at, ttl_seconds)
        call = calls.write_file(
            (scope, area, name), content, description, aliases, expected_version, expiry
        )
        return await self._send(call)

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
        call = calls.append_line(
            (scope, area, name), line, expected_version, aliases, description
        )
        return await self._send(call)

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
        call = calls.replace_fact(
            (scope, area, name),
            old_string,
            new_string,
            expected_version,
            aliases,
            description,
        )
        return await self._send(call)

    async def delete_file(
        self, scope: str, area: str, name: str, *, expected_version: str
    ) -> Deleted:
        return await self._send(
            calls.delete_file((scope, area, name), expected_version)
        )

    async def rename_file(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        new_area: str,
        new_name: str,
        expected_version: str,
    ) -> MemoryFile:
        """Move the file, with its history, to ``new_area``/``new_name`` of its scope.

        A file already there raises ``VersionConflictError`` naming it.
        """
        call = calls.rename_file(
            (scope, area, name), (new_area, new_name), expected_version
        )
        return await self._send(call)

    async def list_versions(
        self, scope: str, area: str, name: str, cursor: str | None = None
    ) -> VersionListing:
        """One page of the file's version records, newest first."""
        return await self._send(calls.list_versions((scope, area, name), cursor))

    async def read_version(
        self, scope: str, area: str, name: str, version: str
    ) -> FileVersion:
        """One version record with the file as it stood."""
        return await self._send(calls.read_version((scope, area, name), version))

    async def restore_version(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        version: str,
        expected_version: str | None,
    ) -> MemoryFile:
        """Write ``version`` again as a new version; None re-creates a deleted file."""
        call = calls.restore_version((scope, area, name), version, expected_version)
        return await self._send(call)

    async def run_memory_command(
        self, scope: str, command: Mapping[str, object]
    ) -> MemoryToolAnswer:
        """One command of Claude's memory tool (``memory_20250818``) on ``scope``."""
        return await self._send(calls.memory_command(scope, command))
