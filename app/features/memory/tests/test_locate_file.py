"""``locate_file`` answers every path as its checks, taken in order, would."""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tenchi.errors import AppError

from app.features.memory.domain import Address, address_of
from app.features.memory.policy import (
    locate_file,
    require_area,
    require_name,
    require_path,
)
from app.shared.identity import Grant, Identity
from app.shared.locations import Location

IDENTITY = Identity(grants={"user": Grant(entity_id="u1", role="owner")})

# Every kind of character a check looks at: slug characters, the rest of
# printable ASCII ('/', '\\' and '.' among them), controls, DEL and C1, and
# non-ASCII letters, format characters, separators, noncharacters and a lone
# surrogate (not UTF-8).
TRICKY = "a-z09_.-/\\ ~[]\x00\x1f\x7f\x85\x9féß\u200b\u2028\ufdd0\uffff\ud800"
segment = st.text(alphabet=st.sampled_from(list(TRICKY)), max_size=5) | st.text(
    max_size=5
)


def checked_in_order(area: str, name: str) -> Address | tuple[str, object]:
    """What the checks of a file path, taken one after another, answer."""
    try:
        require_path(area, name)
        require_area(area)
        require_name(name)
    except AppError as refused:
        return refused.code, refused.details
    return address_of(Location("user", area, name), "u1")


def located(area: str, name: str) -> Address | tuple[str, object]:
    try:
        return locate_file(IDENTITY, "user", area, name)
    except AppError as refused:
        return refused.code, refused.details


@settings(max_examples=3000)
@given(area=segment, name=segment)
@example(area="notes", name=".")
@example(area="notes", name="..")
@example(area="notes", name="...")
@example(area="notes", name=" ")
@example(area="notes", name="a/b")
@example(area="notes", name="a\\b")
@example(area="notes", name="tea\x7f")
@example(area="notes", name="caf\u00e9")
@example(area="notes", name="x\u200b")
@example(area="Notes", name="a/b")
@example(area="no tes", name="tea")
@example(area="-notes", name="tea")
@example(area="notes", name="\ud800")
def test_locate_file_answers_as_its_checks_in_order(area: str, name: str) -> None:
    assert located(area, name) == checked_in_order(area, name)


@pytest.mark.parametrize(
    ("area", "name"),
    [("notes", "tea"), ("a_b-9", "..."), ("0", "[x] ~!"), ("notes", " ")],
)
def test_slug_areas_and_printable_names_are_located(area: str, name: str) -> None:
    assert locate_file(IDENTITY, "user", area, name) == address_of(
        Location("user", area, name), "u1"
    )


@pytest.mark.parametrize(
    ("area", "name", "field"),
    [
        ("notes", ".", "name"),
        ("notes", "..", "name"),
        ("notes", "a/b", "name"),
        ("notes", "a\\b", "name"),
        ("notes", "tea\x7f", "name"),
        ("notes", "x\u200b", "name"),
        ("Notes", "tea", "area"),
        ("Notes", "a/b", "name"),  # the path's name before the area's slug
    ],
)
def test_other_paths_are_refused_on_the_right_field(
    area: str, name: str, field: str
) -> None:
    with pytest.raises(AppError) as refused:
        locate_file(IDENTITY, "user", area, name)
    assert refused.value.code == "INVALID_ARGUMENT"
    assert refused.value.details["argument"] == field
