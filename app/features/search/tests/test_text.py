"""Folding, tokens and query terms."""

from hypothesis import given
from hypothesis import strategies as st

from app.features.search.domain.text import (
    MAX_FOLD_GROWTH,
    RUN,
    WORD,
    Term,
    fold,
    original_offsets,
    query_terms,
    tokens,
    words_and_runs,
)


def test_folding_drops_case_diacritics_and_compatibility_forms() -> None:
    assert fold("Café Crème in Zürich") == "cafe creme in zurich"
    assert fold("STRASSE Straße") == "strasse strasse"
    assert fold("Đỉnh Łódź Ørsted Æsir") == "dinh lodz orsted aesir"
    wide = "\uff34\uff45\uff53\uff54 \ufb01le \u0130stanbul"
    assert fold(wide) == "test file istanbul"


def test_punctuation_and_symbols_separate() -> None:
    assert [t.text for t in tokens(fold('a:b "c" -d NEAR(e) x_y'))] == [
        "a",
        "b",
        "c",
        "d",
        "near",
        "e",
        "x",
        "y",
    ]


def test_scripts_without_spaces_form_runs() -> None:
    found = tokens(fold("冻顶乌龙 tea ไทย 2024年 🍵"))
    assert [(t.kind, t.text) for t in found] == [
        (RUN, "冻顶乌龙"),
        (WORD, "tea"),
        (RUN, "ไทย"),
        (WORD, "2024"),
        (RUN, "年"),
        (RUN, "🍵"),
    ]


def test_offsets_map_folded_positions_back() -> None:
    text = "ßé x"
    assert fold(text) == "sse x"
    assert original_offsets(text) == [2, 3, 4, 5]


def test_the_last_word_is_a_prefix_and_duplicates_go() -> None:
    assert query_terms("Oolong TEA oolong te") == (
        Term(WORD, "oolong"),
        Term(WORD, "tea"),
        Term(WORD, "te", prefix=True),
    )
    assert query_terms("tea 冻顶") == (Term(WORD, "tea"), Term(RUN, "冻顶"))


def test_operator_text_is_only_words() -> None:
    assert query_terms("'; DROP TABLE x; --") == (
        Term(WORD, "drop"),
        Term(WORD, "table"),
        Term(WORD, "x", prefix=True),
    )
    assert query_terms('" - * ( ) :') == ()


@given(st.text() | st.text(alphabet="ab é,.\t\n\x1f\u3000冻顶ไทย🍵\u2028"))
def test_words_and_runs_are_the_tokens_by_kind(text: str) -> None:
    """Indexing a file (``words_and_runs``) splits as queries do (``tokens``)."""
    found = tokens(fold(text))

    assert words_and_runs(fold(text)) == (
        [t.text for t in found if t.kind == WORD],
        [t.text for t in found if t.kind == RUN],
    )


@given(st.characters())
def test_no_character_folds_longer_than_the_bound(char: str) -> None:
    assert len(fold(char)) <= MAX_FOLD_GROWTH
    assert len(fold("\ufdfa")) == MAX_FOLD_GROWTH
