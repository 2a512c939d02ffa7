"""What every conformance case shares: the Transport protocol, the configuration a
backend must run with, a fresh identity per test, and error assertions."""

import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import pytest
from tenchi.errors import AppError
from wenchang_client.errors import WenchangError

from app.features.memory.domain import entry_cost
from app.features.memory.schemas import (
    Deleted,
    FileEntry,
    FileListing,
    FileVersion,
    MemoryFile,
    MemoryIndex,
    VersionListing,
)
from app.shared.errors import GUIDANCE, Category
from app.shared.identity import Grant, Identity

SOURCE = "conformance"
OTHER_SOURCE = "conformance-other"
MAX_FILE_BYTES = 256
INDEX_MAX_BYTES = 4096
LIST_PAGE_SIZE = 2
MAX_FILES_PER_ENTITY = 8
SCOPE_PRIORITY = ("user", "org")
WRITE_ROLES = {"org": ["admin", "owner"], "team": ["admin"]}
SUITE_SETTINGS: dict[str, Any] = {
    "max_file_bytes": MAX_FILE_BYTES,
    "index_max_bytes": INDEX_MAX_BYTES,
    "list_page_size": LIST_PAGE_SIZE,
    "max_files_per_entity": MAX_FILES_PER_ENTITY,
    "scope_priority": SCOPE_PRIORITY,
    "write_roles": WRITE_ROLES,
}
"""Settings every backend under test runs with (besides its storage URL)."""

TIMESTAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z"


class Transport(Protocol):
    """The seven operations for one identity, raising WenchangError."""

    async def get_memory_index(self) -> MemoryIndex: ...

    async def read_file(self, scope: str, area: str, name: str) -> MemoryFile: ...

    async def list_prefix(
        self, scope: str, area: str | None = None, cursor: str | None = None
    ) -> FileListing: ...

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
    ) -> MemoryFile: ...

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
    ) -> MemoryFile: ...

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
    ) -> MemoryFile: ...

    async def delete_file(
        self, scope: str, area: str, name: str, *, expected_version: str
    ) -> Deleted: ...

    async def rename_file(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        new_area: str,
        new_name: str,
        expected_version: str,
    ) -> MemoryFile: ...

    async def list_versions(
        self, scope: str, area: str, name: str, cursor: str | None = None
    ) -> VersionListing: ...

    async def read_version(
        self, scope: str, area: str, name: str, version: str
    ) -> FileVersion: ...

    async def restore_version(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        version: str,
        expected_version: str | None,
    ) -> MemoryFile: ...


type Connect = Callable[[Identity | None], AbstractAsyncContextManager[Transport]]
"""Opens a transport acting as an identity; None: credentials that do not resolve."""


def conformance_identity(
    label: str = SOURCE, *, like: Identity | None = None
) -> Identity:
    """Fresh entities in scopes user, org, project (writable) and team (role-gated)."""
    if like is not None:
        return Identity(grants=like.grants, label=label)
    run = uuid.uuid4().hex[:12]
    grants = {
        "user": Grant(f"u-{run}", "owner"),
        "org": Grant(f"o-{run}", "owner"),
        "project": Grant(f"p-{run}", "owner"),
        "team": Grant(f"t-{run}", "member"),
    }
    return Identity(grants=grants, label=label)


def entry_of(file: MemoryFile) -> FileEntry:
    return FileEntry.model_validate(file.model_dump(exclude={"content"}))


def cost_of(file: MemoryFile) -> int:
    return entry_cost(entry_of(file))


async def expect[E: WenchangError](call: Awaitable[object], kind: type[E]) -> E:
    """The exception ``call`` raises, which must be exactly ``kind``."""
    try:
        result = await call
    except WenchangError as exc:
        if type(exc) is not kind:
            pytest.fail(f"expected {kind.__name__}, got {type(exc).__name__}: {exc}")
        return exc
    pytest.fail(f"expected {kind.__name__}, the call returned {result!r}")


def core_error(check: Callable[..., object], *arguments: Any) -> AppError:
    """The error the core raises for ``check(*arguments)`` (the payload to match)."""
    try:
        check(*arguments)
    except AppError as exc:
        return exc
    raise AssertionError(f"{check.__name__}{arguments!r} did not reject")


def assert_payload(raised: WenchangError, expected: AppError, case: str = "") -> None:
    """Same code, same error payload, and the category's guidance at the end.

    A surface may name the failed call's request in the payload (MCP does, in
    ``details.request_id``); it is per call, so it is checked for shape only.
    """
    assert raised.code == expected.code, case
    details = dict(raised.details)
    request_id = details.pop("request_id", None)
    assert request_id is None or (isinstance(request_id, str) and request_id), case
    assert details == expected.details, case
    assert raised.message.endswith(GUIDANCE[Category(raised.category)]), case


class Harness:
    """Fixtures of every case; a subclass supplies ``connect``."""

    @pytest.fixture
    def identity(self) -> Identity:
        return conformance_identity()

    @pytest.fixture
    async def transport(
        self, connect: Connect, identity: Identity
    ) -> AsyncGenerator[Transport]:
        async with connect(identity) as transport:
            yield transport


async def create(
    transport: Transport,
    name: str = "probe",
    content: str = "- [stated] a\n",
    *,
    scope: str = "user",
    area: str = "notes",
    description: str = "d",
    aliases: Sequence[str] = ("x", "y"),
) -> MemoryFile:
    """Create a file (``expected_version=None``)."""
    return await transport.write_file(
        scope,
        area,
        name,
        content=content,
        description=description,
        aliases=aliases,
        expected_version=None,
    )
