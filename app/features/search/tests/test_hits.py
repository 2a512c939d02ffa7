"""The position a search cursor carries, and hits as shown."""

import pytest

from app.features.search.domain.hits import position_of, ranked_at, render_hits
from app.features.search.domain.ranking import Ranked
from app.features.search.domain.text import query_terms

from .test_ranking import doc

REACH = ["team/t-1/", "user/alice/"]


def test_a_position_names_its_hit_again_without_the_entity() -> None:
    hit = Ranked("user/alice/notes/tea.md", 1 / 3)
    position = position_of(hit, REACH)

    assert "alice" not in position
    assert ranked_at(position, REACH) == hit
    assert ranked_at(position, ["team/t-1/", "user/bob/"]) == Ranked(
        "user/bob/notes/tea.md", 1 / 3
    )


def test_a_hit_outside_the_reach_has_no_position() -> None:
    with pytest.raises(ValueError, match=r"^a hit outside the searched prefixes$"):
        position_of(Ranked("user/bob/notes/tea.md", 1.0), REACH)


@pytest.mark.parametrize("position", ["", "zz\n0\nx", "0x1p0\n2\nx", "0x1p0\nnine\nx"])
def test_a_position_that_does_not_parse_names_no_hit(position: str) -> None:
    assert ranked_at(position, REACH) is None


def test_a_hit_shows_the_file_its_score_and_snippet() -> None:
    document = doc("tea", "I like green tea.", "Drinks", "chai")

    (hit,) = render_hits(
        [(Ranked(document.key, 2.5), document)], query_terms("green"), None
    )

    assert hit.model_dump() == {
        "scope": "user",
        "area": "notes",
        "name": "tea",
        "description": "Drinks",
        "aliases": ["chai"],
        "version": "v",
        "last_updated": "2026-01-01T00:00:00Z",
        "score": 2.5,
        "snippet": "I like **green** tea.",
    }
