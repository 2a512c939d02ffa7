"""Every mutating operation checks write roles on its own.

One case per operation: a member of a scope whose policy requires ``owner``
is refused with RestrictedScopeError(role_required) and storage is unchanged;
an owner's identical call lands. Breaking the check of any one operation fails
its case. A new mutating operation adds one row to MUTATIONS.
"""

from collections.abc import Awaitable, Callable

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import AppendLine, DeleteFile, ReplaceFact, WriteFile
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext
from app.shared.errors import restricted_scope

from .conftest import Where, as_identity, create, make_context, snapshot

WHERE: Where = {"scope": "team", "area": "notes", "name": "tea"}
OWNER = "team=t-1:owner"
MEMBER = "team=t-1:member"

Mutation = Callable[[AppContext, str], Awaitable[object]]


async def _create(context: AppContext, version: str) -> object:
    del version
    return await write_file(
        WriteFile(
            **WHERE, content="new", description="", aliases=[], expected_version=None
        ),
        context,
    )


async def _replace(context: AppContext, version: str) -> object:
    request = WriteFile(
        **WHERE, content="other", description="", aliases=[], expected_version=version
    )
    return await write_file(request, context)


async def _append(context: AppContext, version: str) -> object:
    line = AppendLine(
        scope="team",
        area="notes",
        name="tea",
        line="- [stated] Hot.",
        expected_version=version,
    )
    return await append_line(line, context)


async def _replace_fact(context: AppContext, version: str) -> object:
    request = ReplaceFact(
        scope="team",
        area="notes",
        name="tea",
        old_string="tea",
        new_string="oolong",
        expected_version=version,
    )
    return await replace_fact(request, context)


async def _delete(context: AppContext, version: str) -> object:
    return await delete_file(DeleteFile(**WHERE, expected_version=version), context)


MUTATIONS: dict[str, tuple[Mutation, bool]] = {
    # name: (call, whether the file exists beforehand)
    "write_file create": (_create, False),
    "write_file replace": (_replace, True),
    "append_line": (_append, True),
    "replace_fact": (_replace_fact, True),
    "delete_file": (_delete, True),
}


@pytest.mark.parametrize("operation", sorted(MUTATIONS))
async def test_a_member_is_refused_where_owners_write(operation: str) -> None:
    mutate, exists = MUTATIONS[operation]
    owner = make_context(grants=(OWNER,), write_roles={"team": ["owner"]})
    version = ""
    if exists:
        version = (await create(owner, "- [stated] Likes tea.\n", **WHERE)).version
    member = as_identity(owner, MEMBER)
    before = await snapshot(owner.storage)

    with pytest.raises(AppError) as caught:
        await mutate(member, version)

    assert caught.value.definition is restricted_scope
    assert caught.value.details["reason"] == "role_required"
    assert caught.value.details["required_roles"] == ["owner"]
    assert await snapshot(owner.storage) == before
    # The same call by an owner lands: the refusal was the role, nothing else.
    await mutate(owner, version)
    assert await snapshot(owner.storage) != before
