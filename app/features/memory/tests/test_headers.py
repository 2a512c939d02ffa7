"""HTTP preconditions: headers a route turns into an expected_version."""

from collections.abc import Callable

import pytest
from tenchi.errors import AppError

from app.features.memory.routes.headers import expected_from_if_match, expected_from_put
from app.shared.errors import invalid_argument, precondition_required

from .conftest import assert_error


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
