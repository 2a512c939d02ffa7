import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    oversize_write,
    restricted_scope,
)

from .conftest import (
    LOCATION,
    assert_error,
    create,
    make_context,
    snapshot,
)
from .requests import write_request as request


@pytest.mark.parametrize(
    ("content", "size"),
    [("x" * 101, 101), ("€" * 34, 102)],
    ids=["ascii", "multibyte"],
)
async def test_write_file_over_the_byte_limit_is_oversize(
    content: str, size: int
) -> None:
    """The limit counts UTF-8 bytes, not characters, and nothing is written."""
    context = make_context(limits=MemoryLimits(max_file_bytes=100))

    with pytest.raises(AppError) as caught:
        await write_file(request(content), context)

    assert_error(
        caught.value,
        oversize_write,
        error="OversizeWriteError",
        category="recoverable",
        size=size,
        limit=100,
        **LOCATION,
    )
    assert await snapshot(context.storage) == []


async def test_write_file_at_exactly_the_byte_limit_succeeds() -> None:
    """The limit is inclusive, and metadata does not count toward it."""
    context = make_context(limits=MemoryLimits(max_file_bytes=100))

    written = await write_file(
        request("€" * 33 + "x", description="d" * 500, aliases=["a" * 500]), context
    )

    assert len(written.content.encode()) == 100


async def test_write_file_oversize_is_reported_before_a_stale_version() -> None:
    """Size is checked before storage, so it wins over a stale version."""
    context = make_context(limits=MemoryLimits(max_file_bytes=10))
    await create(context, "small")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await write_file(request("x" * 11, "stale"), context)

    assert caught.value.definition is oversize_write
    assert await snapshot(context.storage) == before


@pytest.mark.parametrize("description", ["two\nlines", "cr\rhere", "para\u2029sep"])
async def test_write_file_with_a_multiline_description_is_invalid(
    context: AppContext, description: str
) -> None:
    """A description is one line; any line break is rejected before storage."""
    with pytest.raises(AppError) as caught:
        await write_file(request(description=description), context)

    assert_error(
        caught.value,
        invalid_argument,
        error="InvalidArgumentError",
        category="recoverable",
        argument="description",
    )
    assert await snapshot(context.storage) == []


async def test_write_file_to_the_system_area_is_restricted(
    context: AppContext,
) -> None:
    """system/ is curated: writes are refused permanently."""
    with pytest.raises(AppError) as caught:
        await write_file(request(area="system"), context)

    assert_error(
        caught.value,
        restricted_scope,
        error="RestrictedScopeError",
        category="permanent",
        reason="system_read_only",
        scope="user",
        area="system",
        name="tea",
    )


async def test_write_file_to_a_role_gated_scope_lists_required_roles() -> None:
    """Without a permitted role the write is refused, naming the roles sorted."""
    context = make_context(write_roles={"team": ["owner", "admin"]})

    with pytest.raises(AppError) as caught:
        await write_file(request(scope="team"), context)

    assert_error(
        caught.value,
        restricted_scope,
        error="RestrictedScopeError",
        category="permanent",
        reason="role_required",
        required_roles=["admin", "owner"],
        scope="team",
        area="notes",
        name="tea",
    )
    assert await snapshot(context.storage) == []


async def test_write_file_to_a_role_gated_scope_with_the_role_succeeds() -> None:
    """A caller holding a permitted role writes normally."""
    context = make_context(
        grants=["team=t-1:admin"], write_roles={"team": ["owner", "admin"]}
    )

    written = await write_file(request(scope="team"), context)

    assert written.scope == "team"


async def test_write_file_to_system_with_bad_arguments_is_still_restricted() -> None:
    """Write permission is checked before the remaining arguments."""
    context = make_context(limits=MemoryLimits(max_file_bytes=5))

    with pytest.raises(AppError) as caught:
        await write_file(
            request("x" * 50, "stale", area="system", description="a\nb"), context
        )

    assert caught.value.details["reason"] == "system_read_only"


async def test_write_file_with_a_bad_name_in_system_is_invalid_name(
    context: AppContext,
) -> None:
    """Name characters are checked before write permission."""
    with pytest.raises(AppError) as caught:
        await write_file(request(area="system", name="a\u200bb"), context)

    assert caught.value.details["argument"] == "name"


@pytest.mark.parametrize(
    ("scope", "area", "name", "argument"),
    [
        ("org", "Bad Area", "..", "scope"),
        ("user", "..", "..", "area"),
        ("user", "Notes", "a\u200bb", "area"),
        ("user", "Notes", "..", "name"),
        ("user", "Notes", "a/b", "name"),
    ],
    ids=[
        "grant-before-area",
        "bad-area-before-bad-name",
        "slug-before-name-characters",
        "path-before-slug",
        "separator-before-slug",
    ],
)
async def test_write_file_reports_the_first_failing_check(
    context: AppContext, scope: str, area: str, name: str, argument: str
) -> None:
    """grant -> path (area, then name) -> area slug -> name characters."""
    with pytest.raises(AppError) as caught:
        await write_file(request(scope=scope, area=area, name=name), context)

    assert caught.value.definition is invalid_argument
    assert caught.value.details["argument"] == argument
