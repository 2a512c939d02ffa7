"""What search keeps of a file: words per field, runs, lengths and run grams."""

from app.features.search.domain.analysis import (
    add_counts,
    analyse,
    field_texts,
    query_grams,
)
from app.features.search.domain.text import RUN, Term


def test_each_field_keeps_its_words_and_runs_apart() -> None:
    analysis = analyse(
        field_texts("green-tea", ["Oolong", "冻顶"], "Tea, tea!", "tea 乌龙茶 and 🍵")
    )

    assert analysis.word_rows() == [
        ("and", (0, 0, 0, 1)),
        ("green", (1, 0, 0, 0)),
        ("oolong", (0, 1, 0, 0)),
        ("tea", (1, 0, 2, 1)),
    ]
    assert analysis.run_counts("乌龙") == (0, 0, 0, 1)
    assert analysis.run_counts("冻") == (0, 1, 0, 0)


def test_a_field_is_as_long_as_its_words_plus_its_run_characters() -> None:
    analysis = analyse(field_texts("n", ["a b", "冻顶"], "", "tea 乌龙茶 and 🍵"))

    assert analysis.lengths == (1, 4, 0, 6)


def test_grams_are_the_characters_and_pairs_inside_each_run() -> None:
    """A run term can only occur where all its pairs do; no pair spans two runs."""
    analysis = analyse(field_texts("n", ["冻顶"], "", "乌龙茶 x 🍵"))

    assert analysis.grams() == {
        "冻",
        "顶",
        "冻顶",
        "乌",
        "龙",
        "茶",
        "乌龙",
        "龙茶",
        "🍵",
    }


def test_a_file_without_runs_has_no_grams() -> None:
    assert analyse(field_texts("n", [], "tea", "green tea")).grams() == set()


def test_counts_add_field_by_field() -> None:
    assert add_counts((1, 2, 3, 4), (10, 20, 30, 40)) == (11, 22, 33, 44)


def test_a_run_term_needs_its_pairs_or_its_one_character() -> None:
    held = analyse(field_texts("n", [], "", "最喜欢冻顶乌龙茶")).grams()

    assert query_grams(Term(RUN, "冻顶乌")) == {"冻顶", "顶乌"}
    assert query_grams(Term(RUN, "冻")) == {"冻"}
    assert query_grams(Term(RUN, "冻顶乌")) <= held


def test_only_the_first_folded_characters_of_a_field_are_searched() -> None:
    """So a file's counts always fit the bits the index packs them in."""
    analysis = analyse(field_texts("n", [], "x" * 4092 + " tea", "tea"))

    assert analysis.word_rows() == [
        ("n", (1, 0, 0, 0)),
        ("tea", (0, 0, 0, 1)),
        ("x" * 4092, (0, 0, 1, 0)),
    ]
    assert analysis.lengths == (1, 0, 1, 1)
