"""Each refusal of the path policy names the argument at fault and says why."""

import pytest
from tenchi.errors import AppError

from app.features.memory.policy import (
    LISTING_CURSOR_HINT,
    locate_entity,
    locate_file,
    require_area,
    require_grant,
    require_issued_cursor,
    require_name,
    require_text,
)
from app.shared.identity import Grant, Identity
from app.shared.locations import SEGMENT_RULE

ALICE = Identity(grants={"user": Grant("alice", "owner")})


def refusal(call: object) -> tuple[str, str]:
    """(argument, sentence before the guidance) of the INVALID_ARGUMENT raised."""
    assert isinstance(call, AppError)
    assert call.details["error"] == "InvalidArgumentError"
    return call.details["argument"], str(call).split(". ")[0]


def raised(run: object, *arguments: object) -> tuple[str, str]:
    with pytest.raises(AppError) as caught:
        run(*arguments)  # type: ignore[operator]
    return refusal(caught.value)


def test_text_that_is_not_utf8_is_refused_by_its_argument() -> None:
    assert raised(require_text, "area", "\ud800") == (
        "area",
        "Argument area is invalid: area is not valid UTF-8 text",
    )
    assert raised(require_area, "\ud800")[0] == "area"
    assert raised(require_name, "\ud800")[0] == "name"
    assert raised(require_grant, ALICE, "\ud800")[0] == "scope"


def test_a_scope_without_a_grant_lists_the_available_ones() -> None:
    two = Identity(grants={"user": Grant("a", "owner"), "team": Grant("t", "owner")})
    assert raised(require_grant, two, "agent") == (
        "scope",
        "Argument scope is invalid: scope 'agent' is not available in this "
        "session; available scopes: team, user",
    )
    assert raised(require_grant, Identity(grants={}), "user")[1].endswith(
        "available scopes: none"
    )


def test_path_segments_come_first_the_area_before_the_name_then_the_slug() -> None:
    slug = "must be a lowercase slug: a-z0-9 first, then a-z0-9, '-' or '_'"
    assert raised(locate_file, ALICE, "user", "Bad", "a/b")[0] == "name"
    assert raised(locate_file, ALICE, "user", "a/b", "c/d")[0] == "area"
    assert raised(locate_file, ALICE, "user", "Bad", "tea") == (
        "area",
        f"Argument area is invalid: area 'Bad' {slug}",
    )
    assert raised(locate_file, ALICE, "user", "a/b", "tea")[1].startswith(
        "Argument area is invalid: area 'a/b' must"
    )
    assert raised(locate_file, ALICE, "user", "notes", "a/b") == (
        "name",
        f"Argument name is invalid: name 'a/b' {SEGMENT_RULE}".split(". ")[0],
    )


@pytest.mark.parametrize(
    "char",
    [
        "\ufdd0",
        "\ufdef",
        "\ufffe",
        "\uffff",
        "\U0001fffe",
        "\u200b",
        "\u2028",
        "\u2029",
    ],
)
def test_invisible_separator_and_noncharacters_are_refused(char: str) -> None:
    assert raised(require_name, f"tea{char}") == (
        "name",
        "Argument name is invalid: name must not contain invisible, separator, "
        f"or noncharacter U+{ord(char):04X}",
    )


@pytest.mark.parametrize("char", ["\ufdcf", "\ufdf0", "\ufffd", "é", "\u4e2d"])
def test_other_characters_are_names(char: str) -> None:
    assert require_name(f"tea{char}") == f"tea{char}"


@pytest.mark.parametrize(
    ("scope", "entity", "argument"),
    [("a/b", "e", "scope"), ("user", "a/b", "entity_id")],
)
def test_an_entity_the_operator_names_is_checked_segment_by_segment(
    scope: str, entity: str, argument: str
) -> None:
    bad = scope if argument == "scope" else entity
    assert raised(locate_entity, scope, entity) == (
        argument,
        f"Argument {argument} is invalid: {argument} {bad!r} {SEGMENT_RULE}".split(
            ". "
        )[0],
    )


def test_a_cursor_of_another_listing_is_refused_with_the_hint() -> None:
    argument, sentence = raised(require_issued_cursor, b"key", "user/a/", "forged")
    assert argument == "cursor"
    assert (
        sentence == f"Argument cursor is invalid: {LISTING_CURSOR_HINT}".split(". ")[0]
    )
