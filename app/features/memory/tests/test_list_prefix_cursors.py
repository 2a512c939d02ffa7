import base64
import binascii

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import ListPrefix
from app.features.memory.use_cases.list_prefix import list_prefix
from app.shared.errors import invalid_argument

from .conftest import (
    as_identity,
    assert_error,
    create,
    make_context,
)
from .listings import paged_context


async def test_list_prefix_cursor_never_carries_the_entity_or_key() -> None:
    """A cursor neither contains nor decodes to the entity id or storage path."""
    context = make_context(
        grants=["user=entity-7f3a:owner"], limits=MemoryLimits(list_page_size=1)
    )
    for name in "ab":
        await create(context, "x", name=name)

    listing = await list_prefix(ListPrefix(scope="user"), context)

    cursor = listing.next_cursor
    assert cursor is not None
    decoded = [cursor.encode(), *map(_lenient_b64, cursor.split("."))]
    assert not any(b"entity-7f3a" in part or b"user/" in part for part in decoded)


def _lenient_b64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return b""


@pytest.mark.parametrize(
    ("issued", "used"),
    [
        (("user", "notes"), ("user", "people")),
        (("user", None), ("user", "notes")),
        (("user", "notes"), ("user", None)),
        (("user", None), ("team", None)),
    ],
    ids=["other-area", "scope-to-area", "area-to-scope", "other-scope"],
)
async def test_list_prefix_rejects_a_cursor_from_another_listing(
    issued: tuple[str, str | None], used: tuple[str, str | None]
) -> None:
    """A cursor is bound to the exact scope and area that issued it."""
    context = paged_context(1)
    for scope in ("user", "team"):
        for area in ("notes", "people"):
            for name in "ab":
                await create(context, "x", scope=scope, area=area, name=name)
    page = await list_prefix(ListPrefix(scope=issued[0], area=issued[1]), context)

    with pytest.raises(AppError) as caught:
        await list_prefix(
            ListPrefix(scope=used[0], area=used[1], cursor=page.next_cursor), context
        )

    assert_error(
        caught.value,
        invalid_argument,
        error="InvalidArgumentError",
        category="recoverable",
        argument="cursor",
    )


async def test_list_prefix_rejects_a_cursor_issued_to_another_entity() -> None:
    """Bob cannot page with alice's cursor, even in the same scope and area."""
    alice = paged_context(1)
    bob = as_identity(alice, "user=bob:owner")
    for context in (alice, bob):
        for name in "ab":
            await create(context, "x", name=name)
    page = await list_prefix(ListPrefix(scope="user"), alice)

    with pytest.raises(AppError) as caught:
        await list_prefix(ListPrefix(scope="user", cursor=page.next_cursor), bob)

    assert caught.value.details["argument"] == "cursor"


@pytest.mark.parametrize(
    "cursor", ["garbage", "!!!", "a.b", "é.é", ".", "bm90ZXMvYS5tZA", "bm90ZXMvYS5tZA."]
)
async def test_list_prefix_rejects_a_malformed_cursor(cursor: str) -> None:
    """Anything that was not issued as a cursor is InvalidArgument(cursor)."""
    context = paged_context(1)
    for name in "ab":
        await create(context, "x", name=name)

    with pytest.raises(AppError) as caught:
        await list_prefix(ListPrefix(scope="user", cursor=cursor), context)

    assert caught.value.definition is invalid_argument
    assert caught.value.details["argument"] == "cursor"
