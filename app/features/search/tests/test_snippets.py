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


def test_a_match_near_the_start_of_a_long_field_shows_it_from_its_first_word() -> None:
    content = "Tea is fine today. " + "more words here. " * 30 + "The end."

    assert make("fine", content).startswith("Tea is **fine** today.")


def test_the_window_opens_on_the_first_whole_word_of_the_lead() -> None:
    """At most 40 characters come before the first match, starting a word."""
    words = "abcdefgh " * 20
    tail = " and more" * 40

    # 40 characters before the match start inside a word: that word is left out.
    assert make("oolong", words + "oolong" + tail).startswith(
        "abcdefgh " * 4 + "**oolong**"
    )
    # ... or start one: it is kept.
    assert make("oolong", words + "abc oolong" + tail).startswith(
        "abcdefgh " * 4 + "abc **oolong**"
    )
    # Text without spaces is cut 40 characters before the match.
    assert make("冻顶", "乌" * 100 + "冻顶" + "乌" * 200 + " tail").startswith(
        "乌" * 40 + "**冻顶**"
    )


def test_the_richest_window_is_shown_and_the_earliest_of_equals() -> None:
    filler = "and so on " * 30
    richest = make("alpha beta gamma", "alpha " + filler + "alpha beta gamma " + filler)
    earliest = make(
        "alpha beta gamma",
        "alpha beta gamma " + filler + "gamma beta alpha alpha beta gamma " + filler,
    )

    assert "**alpha** **beta** **gamma**" in richest
    assert not richest.startswith("**alpha**")
    assert earliest.startswith("**alpha** **beta** **gamma** and so on")


def test_a_match_starting_a_snippet_length_after_another_is_outside_its_window() -> (
    None
):
    """It could not be shown with the first, so that window holds one term."""
    far = "alpha " + "x" * 233 + " beta"  # beta starts 240 after alpha
    near = " alpha beta"
    found = make("alpha beta", far + " and so on" * 30 + near + " and so on" * 30)

    assert "**alpha** **beta**" in found


def test_matches_fill_the_snippet_up_to_the_limit_and_no_further() -> None:
    filler = " more" * 40
    exact = make("tea", "tea " + "y" * 224 + " tea" + filler)
    over = make("tea oolong", "tea " + "y" * 224 + " oolong" + filler)
    spread = make("tea", ("tea " + "y" * 100 + " ") * 4 + filler)

    assert exact == "**tea** " + "y" * 224 + " **tea**"
    assert len(exact) == SNIPPET_CHARS
    assert over == "**tea** " + "y" * 224
    assert len(spread) <= SNIPPET_CHARS
    assert spread.startswith("**tea** " + "y" * 100 + " **tea**")


def test_adjacent_matches_are_each_marked_and_overlaps_marked_once() -> None:
    assert make("冻", "冻冻") == "**冻****冻**"
    assert make("冻", "冻顶冻顶冻") == "**冻**顶**冻**顶**冻**"
    assert make("冻顶 顶乌", "冻顶乌 冻顶") == "**冻顶**乌 **冻顶**"


def test_every_term_is_sought_in_every_token() -> None:
    assert make("冻顶 tea", "tea 冻顶") == "**tea** **冻顶**"


def test_a_field_that_fits_the_snippet_is_shown_from_its_start() -> None:
    content = "abcdefgh " * 20 + "oolong " + "z" * 53
    assert len(content) == SNIPPET_CHARS

    assert make("oolong", content).startswith("abcdefgh " * 20 + "**oolong** zz")


def test_a_match_begun_before_the_window_is_not_marked() -> None:
    """The window opens 40 characters before its first match even inside a word
    with no space to cut at; what lies before the opening is not shown."""
    long_word = "alpha" + "a" * 45
    content = (
        "and so on " * 30
        + long_word
        + "-beta "
        + "x" * 190
        + " gamma alpha "
        + "and so on " * 5
    )

    assert make("beta gamma alpha", content).startswith("a" * 39 + "-**beta** xxx")
