"""The change feed's cursors: bound to one entity's feed in one scope, holding
a number of at most 18 digits, and refused with a sentence saying what to pass."""

import pytest
from tenchi.errors import AppError

from app.features.changes.policy import (
    change_listing,
    decode_change_cursor,
    require_feed,
)
from app.features.changes.schemas import ReadChanges
from app.features.changes.use_cases.read_changes import read_changes
from app.features.memory.domain import encode_cursor
from app.features.memory.tests.conftest import ScriptedStorage, create, make_context

KEY = b"k"
LISTING = change_listing("user", "alice")
REFUSAL = (
    "Argument cursor is invalid: cursor was not issued by this scope's change "
    "feed; pass a change's cursor or next_cursor, or omit it to start from the "
    "oldest change kept."
)


def test_a_position_of_up_to_18_digits_is_read() -> None:
    assert decode_change_cursor(
        KEY, LISTING, encode_cursor(KEY, LISTING, "9" * 18)
    ) == (10**18 - 1)


@pytest.mark.parametrize("position", ["1" * 19, "12a", "x" * 3])
def test_a_signed_cursor_holding_no_seq_is_refused(position: str) -> None:
    with pytest.raises(AppError) as refused:
        decode_change_cursor(KEY, LISTING, encode_cursor(KEY, LISTING, position))
    assert refused.value.message.startswith(REFUSAL)


async def test_a_cursor_of_one_scope_is_refused_in_another_of_the_same_entity() -> None:
    context = make_context(grants=["user=alice:owner", "team=alice:owner"])
    await create(context)
    page = await read_changes(ReadChanges(scope="user"), context)
    with pytest.raises(AppError) as refused:
        await read_changes(ReadChanges(scope="team", after=page.next_cursor), context)
    assert refused.value.message.startswith(REFUSAL)


def test_storage_without_a_feed_says_so() -> None:
    with pytest.raises(AppError) as refused:
        require_feed(ScriptedStorage())
    assert refused.value.message.startswith("this storage keeps no change feed ")
    assert refused.value.details["reason"] == "unsupported"
