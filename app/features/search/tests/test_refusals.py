"""Search's refusals name their argument and say, in a whole sentence, what
would work."""

import pytest
from tenchi.errors import AppError

from app.features.memory.tests.conftest import make_identity
from app.features.search.domain.hits import search_listing
from app.features.search.policy import (
    require_limit,
    require_query,
    require_search_cursor,
    search_reach,
)


def refusal(error: pytest.ExceptionInfo[AppError]) -> tuple[str, object, str]:
    return error.value.code, error.value.details["argument"], error.value.message


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        ("tea\ud800", "Argument query is invalid: query is not valid UTF-8 text."),
        (" \t", "Argument query is invalid: query is blank; pass words to find."),
        (
            "x" * 257,
            "Argument query is invalid: query has 257 characters, over the "
            "256-character limit; search for fewer words.",
        ),
    ],
)
def test_a_query_that_is_not_one_is_refused(query: str, sentence: str) -> None:
    with pytest.raises(AppError) as refused:
        require_query(query)

    code, argument, message = refusal(refused)
    assert (code, argument) == ("INVALID_ARGUMENT", "query")
    assert message.startswith(sentence + " ")


@pytest.mark.parametrize("limit", [0, 51])
def test_a_limit_outside_1_to_50_is_refused(limit: int) -> None:
    with pytest.raises(AppError) as refused:
        require_limit(limit)

    code, argument, message = refusal(refused)
    assert (code, argument) == ("INVALID_ARGUMENT", "limit")
    assert message.startswith(
        f"Argument limit is invalid: limit must be between 1 and 50; got {limit}. "
    )


def test_an_area_without_a_scope_is_refused() -> None:
    with pytest.raises(AppError) as refused:
        search_reach(make_identity("user=alice:owner"), None, "notes")

    code, argument, message = refusal(refused)
    assert (code, argument) == ("INVALID_ARGUMENT", "area")
    assert message.startswith(
        "Argument area is invalid: area narrows a scope; pass scope too, or omit area. "
    )


def test_a_cursor_of_another_search_is_refused() -> None:
    reach = ["user/alice/"]
    with pytest.raises(AppError) as refused:
        require_search_cursor(b"k", search_listing(reach, "tea"), "nonsense", reach)

    code, argument, message = refusal(refused)
    assert (code, argument) == ("INVALID_ARGUMENT", "cursor")
    assert message.startswith(
        "Argument cursor is invalid: cursor was not issued for this search; pass the "
        "next_cursor returned with the same query, scope and area, or omit it to "
        "start over. "
    )


def test_a_query_of_256_characters_is_taken() -> None:
    assert require_query("x" * 256) == "x" * 256


def test_an_area_narrows_the_scope_searched() -> None:
    identity = make_identity("user=alice:owner", "team=t-1:member")

    assert search_reach(identity, "user", "notes") == ["user/alice/notes/"]
    assert search_reach(identity, "user", None) == ["user/alice/"]
    assert search_reach(identity, None, None) == ["team/t-1/", "user/alice/"]
