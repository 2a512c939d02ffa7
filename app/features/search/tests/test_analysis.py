"""What search keeps of a file: words per field, runs, lengths and run grams."""

from app.features.search.domain.analysis import add_counts, analyse, field_texts


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
