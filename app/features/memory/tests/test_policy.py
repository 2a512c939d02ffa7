from collections.abc import Awaitable, Callable
from dataclasses import replace

import pytest
from tenchi.errors import AppError

from app.features.memory.policy import is_forbidden_name_char, locate_entity
from app.features.memory.schemas import (
    AppendLine,
    DeleteFile,
    GetMemoryIndex,
    ListPrefix,
    ReadFile,
    ReplaceFact,
    WriteFile,
)
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.list_prefix import list_prefix
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    restricted_scope,
    unauthorized,
)

from .conftest import assert_error, make_context

Call = Callable[[AppContext], Awaitable[object]]
WHERE = {"scope": "user", "area": "notes", "name": "tea"}
WRITE: dict[str, object] = {
    "content": "",
    "description": "",
    "aliases": [],
    "expected_version": None,
}
APPEND = {"line": "- [stated] x", "expected_version": "1"}
REPLACE = {"old_string": "a", "new_string": "b", "expected_version": "1"}

CALLS: dict[str, Call] = {
    "get_memory_index": lambda c: get_memory_index(GetMemoryIndex(), c),
    "read_file": lambda c: read_file(ReadFile.model_validate(WHERE), c),
    "list_prefix": lambda c: list_prefix(ListPrefix(scope="user"), c),
    "write_file": lambda c: write_file(WriteFile.model_validate(WHERE | WRITE), c),
    "append_line": lambda c: append_line(AppendLine.model_validate(WHERE | APPEND), c),
    "replace_fact": lambda c: replace_fact(
        ReplaceFact.model_validate(WHERE | REPLACE), c
    ),
    "delete_file": lambda c: delete_file(
        DeleteFile.model_validate(WHERE | {"expected_version": "1"}), c
    ),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
async def test_every_operation_without_an_identity_is_unauthorized(
    call: Call,
) -> None:
    """No identity, no memory: a ResolverFailure before anything else."""
    context = replace(make_context(), identity=None)

    with pytest.raises(AppError) as caught:
        await call(context)

    assert_error(
        caught.value,
        unauthorized,
        error="ResolverFailureError",
        category="permanent",
    )


async def test_system_area_in_a_role_gated_scope_is_system_read_only() -> None:
    """system/ is refused as read-only even where a role would also be missing."""
    context = make_context(write_roles={"user": ["admin"]})

    with pytest.raises(AppError) as caught:
        await write_file(
            WriteFile(
                scope="user",
                area="system",
                name="x",
                content="",
                description="",
                aliases=[],
                expected_version=None,
            ),
            context,
        )

    assert caught.value.definition is restricted_scope
    assert caught.value.details["reason"] == "system_read_only"


@pytest.mark.parametrize(
    ("scope", "entity_id", "argument"),
    [("user", "a/b", "entity_id"), ("..", "alice", "scope"), ("user", "", "entity_id")],
)
def test_an_operator_named_entity_must_be_a_key_segment(
    scope: str, entity_id: str, argument: str
) -> None:
    """A task's scope and entity id must each be one key segment."""
    with pytest.raises(AppError) as caught:
        locate_entity(scope, entity_id)

    assert_error(
        caught.value,
        invalid_argument,
        error="InvalidArgumentError",
        category="recoverable",
        argument=argument,
    )


def test_an_operator_named_entity_locates_its_prefix() -> None:
    """The prefix is the scope, then the entity id."""
    assert locate_entity("user", "alice") == "user/alice/"


def test_a_lone_surrogate_is_a_forbidden_name_character() -> None:
    """A name decoded with surrogateescape (a non-UTF-8 file name in an imported
    tree) holds a lone surrogate: never a file's name, unlike a plain letter."""
    assert is_forbidden_name_char("\udc80")
    assert is_forbidden_name_char("\ud800")
    assert not is_forbidden_name_char("\u00e9")


@pytest.mark.parametrize("write_roles", [None, {"user": ["owner", "reader"]}])
async def test_a_reader_never_writes(
    write_roles: dict[str, list[str]] | None,
) -> None:
    """The role ``reader`` reads, and is refused every write, even where the scope
    lists no write roles (or lists ``reader`` itself)."""
    context = make_context(grants=["user=alice:reader"], write_roles=write_roles)
    request = WriteFile(
        scope="user",
        area="notes",
        name="x",
        content="",
        description="",
        aliases=[],
        expected_version=None,
    )

    with pytest.raises(AppError) as caught:
        await write_file(request, context)

    assert caught.value.details["reason"] == "role_required"
    assert "reader" not in caught.value.details["required_roles"]
    assert (await get_memory_index(GetMemoryIndex(), context)).entries == []
