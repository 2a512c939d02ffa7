"""An edit's changed lines: the smallest whole-line middle, and its word counts."""

from hypothesis import given
from hypothesis import strategies as st

from app.features.search.domain.analysis import FOLDED_LIMITS, analyse_field
from app.features.search.domain.line_changes import line_change, word_change

LIMIT = FOLDED_LIMITS[3]


def test_an_append_is_the_appended_line_and_a_replacement_its_line() -> None:
    old = b"# Tea\n- [stated] Green tea.\n- [stated] Oolong.\n"

    appended = line_change(old, old + b"- [stated] Black tea.\n")
    replaced = line_change(old, old.replace(b"Green", b"Black"))

    assert (appended.removed, appended.added) == ("", "- [stated] Black tea.\n")
    assert (replaced.removed, replaced.added) == (
        "- [stated] Green tea.",
        "- [stated] Black tea.",
    )


def test_a_change_inside_a_word_takes_its_whole_line() -> None:
    change = line_change(b"a\nxtea b\nc", b"a\ntea b\nc")

    assert (change.removed, change.added) == ("xtea b", "tea b")


def test_runs_or_a_field_near_its_limit_are_left_to_a_whole_analysis() -> None:
    change = line_change(b"tea\n", b"tea\n\xe8\x8c\xb6\n")  # 茶, a run

    assert word_change(change, LIMIT, 10) is None
    assert word_change(line_change(b"a\n", b"a\nb\n"), 100, 10) is None


TEXT = st.lists(st.sampled_from(["tea", "a", " ", "\n", "Café", "½", "\u0301"])).map(
    "".join
)


@given(TEXT, TEXT)
def test_the_words_of_the_new_text_are_the_old_ones_moved_by_the_change(
    old: str, new: str
) -> None:
    change = word_change(line_change(old.encode(), new.encode()), LIMIT, 100)

    assert change is not None
    before, after = analyse_field(old, LIMIT), analyse_field(new, LIMIT)
    moved = before.words.copy()
    moved.update(change.counts)
    assert min(moved.values(), default=0) >= 0
    assert +moved == after.words
    assert before.length + change.length == after.length
