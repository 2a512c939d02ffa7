from collections.abc import Awaitable, Callable
from dataclasses import replace

import pytest
from tenchi.errors import AppError

from app.features.memory.policy import expected_from_if_match, expected_from_put
from app.features.memory.schemas import (
    AppendLine,
    DeleteFile,
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
    precondition_required,
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
    "get_memory_index": get_memory_index,
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
    ("if_match", "if_none_match", "expected"),
    [('"7"', None, "7"), (None, "*", None)],
)
def test_expected_from_put_maps_headers_to_a_version(
    if_match: str | None, if_none_match: str | None, expected: str | None
) -> None:
    """If-Match replaces at that version; If-None-Match: * creates."""
    assert expected_from_put(if_match, if_none_match) == expected


def test_expected_from_if_match_strips_the_quotes() -> None:
    """The ETag's quoted value is the version."""
    assert expected_from_if_match('"a-b"', None) == "a-b"


@pytest.mark.parametrize(
    "derive", [expected_from_put, expected_from_if_match], ids=["put", "post-delete"]
)
def test_a_mutation_without_a_precondition_is_precondition_required(
    derive: Callable[[str | None, str | None], object],
) -> None:
    """Neither If-Match nor If-None-Match is a 428."""
    with pytest.raises(AppError) as caught:
        derive(None, None)

    assert_error(
        caught.value,
        precondition_required,
        error="PreconditionRequiredError",
        category="recoverable",
    )


@pytest.mark.parametrize(
    ("derive", "if_match"),
    [(expected_from_put, '"1"'), (expected_from_if_match, '"1"')],
    ids=["put-with-both", "post-delete-if-none-match"],
)
def test_if_none_match_outside_a_plain_put_create_is_invalid(
    derive: Callable[[str | None, str | None], object], if_match: str
) -> None:
    """If-None-Match means create only on PUT, and never beside If-Match."""
    with pytest.raises(AppError) as caught:
        derive(if_match, "*")

    assert_error(
        caught.value,
        invalid_argument,
        error="InvalidArgumentError",
        category="recoverable",
        argument="expected_version",
    )


def test_if_none_match_alone_on_post_or_delete_is_invalid() -> None:
    """Without If-Match, If-None-Match on POST/DELETE is still the wrong header."""
    with pytest.raises(AppError) as caught:
        expected_from_if_match(None, "*")

    assert caught.value.details["argument"] == "expected_version"
