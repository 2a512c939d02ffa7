import pytest

from app.features.memory.domain import entity_prefix_of_key, entity_prefix_of_reach
from app.features.memory.domain.keys import split_key


@pytest.mark.parametrize(
    ("key", "prefix"),
    [
        ("user/e1/notes/a.md", "user/e1/"),
        ("user/e1/notes/deep/a.md", "user/e1/"),
        ("user/e1/", "user/e1/"),
        ("user/e1/x", "user/e1/"),
        ("user/e1", "user/e1"),
        ("user", "user"),
        ("", ""),
        ("user//", "user//"),
    ],
)
def test_entity_prefix_of_key_returns_a_key_without_entity_part_whole(
    key: str, prefix: str
) -> None:
    assert entity_prefix_of_key(key) == prefix


@pytest.mark.parametrize(
    ("reach", "prefix"),
    [
        ("user/e1/", "user/e1/"),
        ("user/e1/notes/", "user/e1/"),
        ("user/e1", "user/e1/"),
        ("user//", "user//"),
    ],
)
def test_entity_prefix_of_reach_is_the_entity_a_reach_prefix_lies_under(
    reach: str, prefix: str
) -> None:
    assert entity_prefix_of_reach(reach) == prefix


@pytest.mark.parametrize("reach", ["user", ""])
def test_entity_prefix_of_reach_refuses_a_prefix_without_entity(reach: str) -> None:
    with pytest.raises(ValueError):
        entity_prefix_of_reach(reach)


def test_an_empty_area_still_has_an_entity_prefix_and_a_bare_md_is_no_file() -> None:
    assert entity_prefix_of_key("user/alice//tea.md") == "user/alice/"
    assert split_key("user/alice/notes/.md") is None
