"""The transports the conformance suites drive: use cases in-process, the typed
client over a real loopback server, and a real MCP client session on that server.
"""

import asyncio
import secrets
import socket
import threading
import time
from collections.abc import AsyncGenerator, Generator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from typing import Any

import httpx
import uvicorn
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp
from wenchang_client.errors import (
    InternalError,
    InvalidArgumentError,
    WenchangError,
)

from app.features.memory.schemas import (
    AppendLine,
    Deleted,
    DeleteFile,
    FileListing,
    FileVersion,
    GetMemoryIndex,
    ListPrefix,
    ListVersions,
    MemoryFile,
    MemoryIndex,
    ReadFile,
    ReadVersion,
    RenameFile,
    ReplaceFact,
    RestoreVersion,
    VersionListing,
    WriteFile,
)
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.list_prefix import list_prefix
from app.features.memory.use_cases.list_versions import list_versions
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.read_version import read_version
from app.features.memory.use_cases.rename_file import rename_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.features.memory.use_cases.restore_version import restore_version
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext
from app.shared.identity import Identity, ResolutionFailure
from tests.mcp_support import http_session
from tests.support.translate import error_from_payload, translate_errors

LOOPBACK = "127.0.0.1"
START_TIMEOUT_SECONDS = 20.0
STOP_TIMEOUT_SECONDS = 10.0


class UseCaseTransport:
    """The seven operations as direct use-case calls on one ``AppContext``."""

    def __init__(self, context: AppContext) -> None:
        self._context = context

    async def get_memory_index(self) -> MemoryIndex:
        with translate_errors():
            return await get_memory_index(GetMemoryIndex(), self._context)

    async def read_file(self, scope: str, area: str, name: str) -> MemoryFile:
        with translate_errors():
            request = ReadFile(scope=scope, area=area, name=name)
            return await read_file(request, self._context)

    async def list_prefix(
        self, scope: str, area: str | None = None, cursor: str | None = None
    ) -> FileListing:
        with translate_errors():
            request = ListPrefix(scope=scope, area=area, cursor=cursor)
            return await list_prefix(request, self._context)

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
        with translate_errors():
            request = WriteFile(
                scope=scope,
                area=area,
                name=name,
                content=content,
                description=description,
                aliases=list(aliases),
                expected_version=expected_version,
            )
            return await write_file(request, self._context)

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
        with translate_errors():
            request = AppendLine(
                scope=scope,
                area=area,
                name=name,
                line=line,
                expected_version=expected_version,
                aliases=None if aliases is None else list(aliases),
                description=description,
            )
            return await append_line(request, self._context)

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
        with translate_errors():
            request = ReplaceFact(
                scope=scope,
                area=area,
                name=name,
                old_string=old_string,
                new_string=new_string,
                expected_version=expected_version,
                aliases=None if aliases is None else list(aliases),
                description=description,
            )
            return await replace_fact(request, self._context)

    async def delete_file(
        self, scope: str, area: str, name: str, *, expected_version: str
    ) -> Deleted:
        with translate_errors():
            request = DeleteFile(
                scope=scope, area=area, name=name, expected_version=expected_version
            )
            return await delete_file(request, self._context)

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
        with translate_errors():
            request = RenameFile(
                scope=scope,
                area=area,
                name=name,
                new_area=new_area,
                new_name=new_name,
                expected_version=expected_version,
            )
            return await rename_file(request, self._context)

    async def list_versions(
        self, scope: str, area: str, name: str, cursor: str | None = None
    ) -> VersionListing:
        with translate_errors():
            request = ListVersions(scope=scope, area=area, name=name, cursor=cursor)
            return await list_versions(request, self._context)

    async def read_version(
        self, scope: str, area: str, name: str, version: str
    ) -> FileVersion:
        with translate_errors():
            request = ReadVersion(scope=scope, area=area, name=name, version=version)
            return await read_version(request, self._context)

    async def restore_version(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        version: str,
        expected_version: str | None,
    ) -> MemoryFile:
        with translate_errors():
            request = RestoreVersion(
                scope=scope,
                area=area,
                name=name,
                version=version,
                expected_version=expected_version,
            )
            return await restore_version(request, self._context)


@asynccontextmanager
async def use_case_transport(
    context: AppContext, identity: Identity | None
) -> AsyncGenerator[UseCaseTransport]:
    yield UseCaseTransport(replace(context, identity=identity))


class TokenRegistry:
    """A Resolver over tokens issued in-process: one fresh token per identity.

    The token-file resolver re-reads its file at most once a second, so suites
    that mint a token per test use this adapter of the same port instead.
    """

    def __init__(self) -> None:
        self._identities: dict[str, Identity] = {}

    def issue(self, identity: Identity) -> str:
        token = "test_" + secrets.token_urlsafe(16)
        self._identities[token] = identity
        return token

    def resolve(self, credentials: str) -> Identity | ResolutionFailure:
        identity = self._identities.get(credentials)
        if identity is None:
            return ResolutionFailure("The bearer token is not valid.")
        return identity


@contextmanager
def serve_in_thread(app: ASGIApp) -> Generator[str]:
    """Serve ``app`` with uvicorn on a free loopback port; yields its base URL.

    The server runs its own event loop in a daemon thread and is always told
    to exit, and joined, when the block ends.
    """
    sock = socket.socket()
    sock.bind((LOOPBACK, 0))
    port: int = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the loopback server did not start")
            time.sleep(0.01)
        yield f"http://{LOOPBACK}:{port}"
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT_SECONDS)
        sock.close()


class McpTransport:
    """The seven operations as tool calls in one MCP client session.

    A failed call's envelope (``error.code`` and ``error.details``) becomes the
    same exception the client raises. A session the server refused to open
    (HTTP 401 before MCP) makes every call raise what that refusal says.
    """

    def __init__(
        self, session: Client | None, *, refusal: WenchangError | None = None
    ) -> None:
        self._session = session
        self._refusal = refusal

    async def _call(self, tool: str, arguments: Mapping[str, object]) -> Any:
        if self._session is None:
            assert self._refusal is not None
            raise self._refusal
        result = await self._session.call_tool(tool, dict(arguments))
        envelope: dict[str, Any] = result.structured_content or {}
        if envelope.get("ok") is True:
            return envelope["result"]
        raise _envelope_error(envelope)

    async def get_memory_index(self) -> MemoryIndex:
        return MemoryIndex.model_validate(await self._call("get_memory_index", {}))

    async def read_file(self, scope: str, area: str, name: str) -> MemoryFile:
        result = await self._call(
            "read_file", {"scope": scope, "area": area, "name": name}
        )
        return MemoryFile.model_validate(result)

    async def list_prefix(
        self, scope: str, area: str | None = None, cursor: str | None = None
    ) -> FileListing:
        arguments = _given(scope=scope, area=area, cursor=cursor)
        result = await self._call("list_prefix", arguments)
        return FileListing.model_validate(result)

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
        arguments = {
            "scope": scope,
            "area": area,
            "name": name,
            "content": content,
            "description": description,
            "aliases": list(aliases),
            "expected_version": expected_version,
        }
        return MemoryFile.model_validate(await self._call("write_file", arguments))

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
        result = await self._call(
            "append_line",
            _given(
                scope=scope,
                area=area,
                name=name,
                line=line,
                expected_version=expected_version,
                aliases=None if aliases is None else list(aliases),
                description=description,
            ),
        )
        return MemoryFile.model_validate(result)

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
        result = await self._call(
            "replace_fact",
            _given(
                scope=scope,
                area=area,
                name=name,
                old_string=old_string,
                new_string=new_string,
                expected_version=expected_version,
                aliases=None if aliases is None else list(aliases),
                description=description,
            ),
        )
        return MemoryFile.model_validate(result)

    async def delete_file(
        self, scope: str, area: str, name: str, *, expected_version: str
    ) -> Deleted:
        arguments = {
            "scope": scope,
            "area": area,
            "name": name,
            "expected_version": expected_version,
        }
        result = await self._call("delete_file", arguments)
        return Deleted.model_validate(result)

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
        arguments = {
            "scope": scope,
            "area": area,
            "name": name,
            "new_area": new_area,
            "new_name": new_name,
            "expected_version": expected_version,
        }
        return MemoryFile.model_validate(await self._call("rename_file", arguments))

    async def list_versions(
        self, scope: str, area: str, name: str, cursor: str | None = None
    ) -> VersionListing:
        arguments = _given(scope=scope, area=area, name=name, cursor=cursor)
        result = await self._call("list_versions", arguments)
        return VersionListing.model_validate(result)

    async def read_version(
        self, scope: str, area: str, name: str, version: str
    ) -> FileVersion:
        arguments = {"scope": scope, "area": area, "name": name, "version": version}
        return FileVersion.model_validate(await self._call("read_version", arguments))

    async def restore_version(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        version: str,
        expected_version: str | None,
    ) -> MemoryFile:
        arguments = {
            "scope": scope,
            "area": area,
            "name": name,
            "version": version,
            "expected_version": expected_version,
        }
        return MemoryFile.model_validate(await self._call("restore_version", arguments))


def _given(**arguments: object) -> dict[str, object]:
    """The arguments that were given: an omitted optional one is left out."""
    return {name: value for name, value in arguments.items() if value is not None}


def _envelope_error(envelope: Mapping[str, Any]) -> WenchangError:
    """The client exception for a tool-MCP failure envelope."""
    error: Mapping[str, Any] = envelope.get("error") or {}
    message = str(error.get("message", "The MCP call failed."))
    if error.get("kind") == "application_error":
        # The request id names the call, as an HTTP body's top-level one does; the
        # payload compared across transports is the rest.
        held: Mapping[str, Any] = error.get("details") or {}
        details = {key: value for key, value in held.items() if key != "request_id"}
        return error_from_payload(str(error["code"]), message, details)
    if error.get("kind") == "invalid_input":
        details = {"error": "InvalidArgumentError", "argument": "input"}
        return InvalidArgumentError(message, details)
    return InternalError(f"MCP tool call failed ({error.get('kind')}): {message}")


async def _refusal(base_url: str, token: str) -> WenchangError | None:
    """What the server says to this token at /mcp over plain HTTP, if it refuses."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        response = await http.post(f"{base_url}/mcp", json={})
    if response.status_code != 401:
        return None
    body: dict[str, Any] = response.json()
    return error_from_payload(body["code"], body["message"], body.get("details"))


@asynccontextmanager
async def mcp_transport(base_url: str, token: str) -> AsyncGenerator[McpTransport]:
    """A real MCP client session (streamable HTTP at /mcp) acting with ``token``.

    The session lives in a task of its own: the SDK's task groups must be
    entered and left by one task, and pytest sets fixtures up and tears them
    down in different ones. Calls from any task of the loop are fine.
    """
    opened: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    finished = asyncio.Event()

    async def host() -> None:
        try:
            async with http_session(base_url, token) as session:
                opened.set_result(session)
                await finished.wait()
        except (MCPError, ExceptionGroup) as exc:
            if opened.done():
                raise
            opened.set_exception(exc)

    hosting = asyncio.create_task(host())
    session: Client | None = None
    try:
        session = await opened
    except (MCPError, ExceptionGroup):
        await hosting
        refusal = await _refusal(base_url, token)
        if refusal is None:
            raise
        yield McpTransport(None, refusal=refusal)
        return
    try:
        yield McpTransport(session)
    finally:
        finished.set()
        await hosting
