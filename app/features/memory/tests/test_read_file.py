import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import ReadFile
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext
from app.shared.errors import invalid_argument, memory_not_found

from .conftest import (
    LOCATION,
    as_identity,
    assert_error,
    create,
    make_context,
    seed_system,
)


def request(scope: str = "user", area: str = "notes", name: str = "tea") -> ReadFile:
    return ReadFile(scope=scope, area=area, name=name)


async def test_read_file_returns_the_file_object(context: AppContext) -> None:
    """A written file reads back with its content, metadata and version."""
    written = await create(
        context, "- [stated] Likes tea.\n", description="Drinks", aliases=["cha"]
    )

    read = await read_file(request(), context)

    assert read == written
    assert read.model_dump() == {
        "scope": "user",
        "area": "notes",
        "name": "tea",
        "content": "- [stated] Likes tea.\n",
        "version": written.version,
        "description": "Drinks",
        "aliases": ["cha"],
        "sources": ["http"],
        "last_updated": "2026-03-01T12:00:00Z",
    }


async def test_read_file_round_trips_content_exactly(context: AppContext) -> None:
    """Unicode, CRLF and a missing trailing newline come back byte for byte."""
    content = "# 茶\r\n- [stated] Mag Grüntee\r\nno newline"
    await create(context, content, name="茶 notes")

    read = await read_file(request(name="茶 notes"), context)

    assert read.content == content


async def test_read_file_of_a_missing_file_is_file_absent(context: AppContext) -> None:
    """Reading a file that does not exist is NotFound with reason file_absent."""
    with pytest.raises(AppError) as caught:
        await read_file(request(), context)

    assert_error(
        caught.value,
        memory_not_found,
        error="NotFoundError",
        category="recoverable",
        reason="file_absent",
        **LOCATION,
    )


async def test_read_file_names_are_case_sensitive(context: AppContext) -> None:
    """A differently-cased name is another file."""
    await create(context, "x")

    with pytest.raises(AppError) as caught:
        await read_file(request(name="Tea"), context)

    assert caught.value.definition is memory_not_found


async def test_read_file_of_system_area_is_allowed(context: AppContext) -> None:
    """The read-only system/ area is readable by everyone granted the scope."""
    await seed_system(context.storage, "rules")

    read = await read_file(request(area="system", name="rules"), context)

    assert read.content == "- [system] Curated.\n"
    assert read.sources == ["task"]


async def test_read_file_is_not_role_gated() -> None:
    """A member may read a scope whose writes need the admin role."""
    context = make_context(write_roles={"team": ["admin"]})
    admin = as_identity(context, "team=t-1:admin")
    await create(admin, "shared", scope="team")

    read = await read_file(request(scope="team"), context)

    assert read.content == "shared"


async def test_read_file_of_an_ungranted_scope_names_available_scopes(
    context: AppContext,
) -> None:
    """An ungranted scope is InvalidArgument(scope) listing the granted ones."""
    with pytest.raises(AppError) as caught:
        await read_file(request(scope="org"), context)

    assert_error(
        caught.value,
        invalid_argument,
        error="InvalidArgumentError",
        category="recoverable",
        argument="scope",
    )
    assert "scope 'org' is not available in this session" in str(caught.value)
    assert "available scopes: team, user." in str(caught.value)


async def test_read_file_never_sees_another_entity(context: AppContext) -> None:
    """Bob, granted the same scope for his own entity, cannot read alice's file."""
    await create(context, "alice's secret")
    bob = as_identity(context, "user=bob:owner")

    with pytest.raises(AppError) as caught:
        await read_file(request(), bob)

    assert caught.value.definition is memory_not_found
    assert "alice" not in str(caught.value.details)


@pytest.mark.parametrize(
    ("area", "name", "argument"),
    [
        ("Notes", "tea", "area"),
        ("..", "tea", "area"),
        ("", "tea", "area"),
        ("no/tes", "tea", "area"),
        ("notes", "..", "name"),
        ("notes", ".", "name"),
        ("notes", "", "name"),
        ("notes", "a/b", "name"),
        ("notes", "a\\b", "name"),
        ("notes", "a\nb", "name"),
        ("notes", "a\x85b", "name"),
        ("notes", "zero\u200bwidth", "name"),
        ("notes", "line\u2028sep", "name"),
        ("notes", "non\ufdd0char", "name"),
        ("notes", "non\U0001fffechar", "name"),
    ],
)
async def test_read_file_of_a_malformed_location_is_invalid_argument(
    context: AppContext, area: str, name: str, argument: str
) -> None:
    """Areas must be slugs; names may not hold separators or invisible characters."""
    with pytest.raises(AppError) as caught:
        await read_file(request(area=area, name=name), context)

    assert_error(
        caught.value,
        invalid_argument,
        error="InvalidArgumentError",
        category="recoverable",
        argument=argument,
    )


@pytest.mark.parametrize("name", ["a.md", "v1.2", "..md", "Ünïcode name", "a b"])
async def test_read_file_accepts_any_other_unicode_name(
    context: AppContext, name: str
) -> None:
    """Names are free Unicode apart from the forbidden classes; `.md` is appended."""
    await create(context, "x", name=name)

    read = await read_file(request(name=name), context)

    assert read.name == name
