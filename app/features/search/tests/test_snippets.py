"""Snippets: which field, which window, which marks."""

from app.features.search.domain.snippets import SNIPPET_CHARS, snippet
from app.features.search.domain.text import query_terms


def make(query: str, content: str, name: str = "n", description: str = "") -> str:
    return snippet((name, "", description, content), query_terms(query))


def test_matches_are_marked_in_the_original_text() -> None:
    assert make("cafe zurich", "At the Café in Zürich.") == (
        "At the **Café** in **Zürich**."
    )
    assert make("oolo", "I like oolong.") == "I like **oolong**."
    assert make("冻顶", "最喜欢冻顶乌龙茶") == "最喜欢**冻顶**乌龙茶"


def test_the_field_matching_most_terms_is_shown() -> None:
    assert make("tea green", "green", name="tea", description="green tea") == (
        "**green** **tea**"
    )
    assert make("tea", "green tea", name="tea") == "green **tea**"


def test_long_text_is_cut_around_the_matches_within_the_limit() -> None:
    content = "filler words " * 40 + "the oolong part " + "more words " * 40
    found = make("oolong", content)
    assert len(found) <= SNIPPET_CHARS
    assert "**oolong**" in found
    assert found.replace("**", "") in " ".join(content.split())


def test_a_snippet_never_exceeds_the_limit_even_with_many_marks() -> None:
    found = make("a", "a " * 500)
    assert len(found) <= SNIPPET_CHARS
    assert found.startswith("**a** **a**")


def test_no_match_means_no_snippet() -> None:
    assert make("zzz", "tea") == ""
