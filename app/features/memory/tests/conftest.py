"""Builders for memory use-case tests: a real context over ``MemoryStorage``.

``make_context`` wires the same collaborators the server does, with a fixed
cursor key and a clock that ticks one second per call, so every result is
deterministic. ``ScriptedStorage`` (``scripted_storage``) is a test double of
the Storage *port*, never of a use case.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

import pytest
from tenchi.errors import AppError, ErrorDef

from app.features.memory.domain import MemoryLimits, file_key
from app.features.memory.policy import ScopePolicy
from app.features.memory.ports import (
    FileMetadata,
    IndexCache,
    Storage,
    StoredObject,
    Write,
)
from app.features.memory.schemas import MemoryFile, WriteFile
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.index_cache import NoIndexCache
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext
from app.shared.errors import GUIDANCE, Category
from app.shared.identity import Identity, parse_grants
from tests.support.contexts import context_over

from .requests import write_request
from .scripted_storage import ScriptedStorage as ScriptedStorage
from .scripted_storage import recreate as recreate
from .scripted_storage import remove as remove
from .scripted_storage import rewrite as rewrite

CURSOR_KEY = b"use-case-tests-cursor-key"
START = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
ALICE = ("user=alice:owner", "team=t-1:member")


class Where(TypedDict):
    """A file's location as keyword arguments of a request model."""

    scope: str
    area: str
    name: str


LOCATION: Where = {"scope": "user", "area": "notes", "name": "tea"}


class TickingClock:
    """A clock whose every call is ``step`` later than the last."""

    def __init__(
        self, start: datetime = START, step: timedelta = timedelta(seconds=1)
    ) -> None:
        self.now = start - step
        self.step = step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now


def make_identity(*grants: str, label: str | None = None) -> Identity:
    return Identity(grants=parse_grants(list(grants)), label=label)


def make_context(
    *,
    storage: Storage | None = None,
    grants: Sequence[str] = ALICE,
    label: str | None = None,
    limits: MemoryLimits | None = None,
    write_roles: Mapping[str, Sequence[str]] | None = None,
    index_cache: IndexCache | None = None,
    clock: Callable[[], datetime] | None = None,
    surface: str = "http",
) -> AppContext:
    """A context as the server builds one, for the identity with ``grants``."""
    policy = ScopePolicy(
        write_roles={
            scope: frozenset(roles) for scope, roles in (write_roles or {}).items()
        }
    )
    return context_over(
        storage or MemoryStorage(),
        index_cache or NoIndexCache(),
        cursor_key=CURSOR_KEY,
        limits=limits or MemoryLimits(),
        policy=policy,
        clock=clock or TickingClock(),
        identity=make_identity(*grants, label=label),
        surface=surface,
    )


def as_identity(context: AppContext, *grants: str) -> AppContext:
    """The same process (storage, cache, clock) serving another caller."""
    return replace(context, identity=make_identity(*grants))


async def create(
    context: AppContext,
    content: str = "",
    *,
    scope: str = "user",
    area: str = "notes",
    name: str = "tea",
    description: str = "",
    aliases: Sequence[str] = (),
) -> MemoryFile:
    """Create a file through the write_file use case."""
    request = WriteFile(
        scope=scope,
        area=area,
        name=name,
        content=content,
        description=description,
        aliases=list(aliases),
        expected_version=None,
    )
    return await write_file(request, context)


async def five_versions(context: AppContext) -> list[str]:
    """Versions of ``tea`` from five writes (a create, four rewrites), newest first."""
    made = [await create(context, "- [stated] 0\n")]
    for n in range(1, 5):
        made.append(await write_file(write_request(f"{n}", made[-1].version), context))
    return [m.version for m in reversed(made)]


async def seed_system(
    storage: Storage, name: str, *, scope: str = "user", entity_id: str = "alice"
) -> str:
    """Put a curated ``system/`` file straight into storage, as an import would."""
    metadata = FileMetadata("curated", (), ("task",), START - timedelta(days=1))
    key = file_key(scope, entity_id, "system", name)
    return await storage.put(Write(key, b"- [system] Curated.\n", metadata))


async def snapshot(storage: Storage) -> list[tuple[str, StoredObject | None]]:
    """Every object in storage with its body, metadata and version."""
    listed = await storage.list_page("", start_after=None, limit=100_000)
    return [(item.key, await storage.get(item.key)) for item in listed]


def assert_error(raised: AppError, definition: ErrorDef, **details: Any) -> None:
    """``raised`` is ``definition`` with exactly ``details`` plus its message."""
    assert raised.definition is definition
    payload = dict(raised.details)
    message = payload.pop("message")
    assert payload == details
    assert message == str(raised)
    assert message.endswith(GUIDANCE[Category(details["category"])])


@pytest.fixture
def context() -> AppContext:
    return make_context()
