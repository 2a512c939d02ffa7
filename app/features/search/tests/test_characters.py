"""One character at a time: what it folds to and what it is part of.

``fold`` caches each character's folding in a table filled on first use, so
these rules are checked on ``fold_char`` and ``kind_of`` themselves: a
character folded once by any earlier test would otherwise hide a change here.
"""

from hypothesis import given
from hypothesis import strategies as st

from app.features.search.domain.text import (
    RUN,
    WORD,
    fold,
    fold_char,
    kind_of,
    original_offsets,
)

SEPARATOR = " "


def test_letters_and_digits_of_spaced_scripts_are_word_characters() -> None:
    assert kind_of("a") == WORD
    assert kind_of("Ж") == WORD
    assert kind_of("5") == WORD


def test_spacing_and_enclosing_marks_stay_inside_a_word() -> None:
    # A spacing vowel sign (Mc) is written as part of its syllable, and an
    # enclosing mark (Me) belongs to what it encloses: neither splits a word.
    assert kind_of("\u093e") == WORD  # DEVANAGARI VOWEL SIGN AA
    assert kind_of("\u20dd") == WORD  # COMBINING ENCLOSING CIRCLE


def test_a_nonspacing_mark_alone_outside_a_run_script_separates() -> None:
    # Folding drops these marks from letters, so one standing alone joins nothing.
    assert kind_of("\u0301") == SEPARATOR


def test_letters_digits_and_marks_of_unspaced_scripts_are_run_characters() -> None:
    assert kind_of("冻") == RUN
    assert kind_of("ไ") == RUN  # THAI CHARACTER SARA AI MAIMALAI
    assert kind_of("\u0e31") == RUN  # THAI CHARACTER MAI HAN-AKAT (Mn)
    assert kind_of("๑") == RUN  # THAI DIGIT ONE


def test_the_first_and_last_letters_of_a_script_range_are_run_characters() -> None:
    assert kind_of("\u1000") == RUN  # MYANMAR LETTER KA, the range's first
    assert kind_of("\u4dbf") == RUN  # the last ideograph of CJK extension A
    assert kind_of("\u10a0") == WORD  # GEORGIAN CAPITAL LETTER AN, just after


def test_pictographic_symbols_are_run_characters_anywhere() -> None:
    assert kind_of("🍵") == RUN
    assert kind_of("©") == RUN


def test_punctuation_currency_and_spaces_separate() -> None:
    for char in ("-", "$", "。", "\u3000", ":", "\t"):
        assert kind_of(char) == SEPARATOR, char


def test_a_character_folds_without_case_or_diacritics() -> None:
    assert fold_char("A") == "a"
    assert fold_char("é") == "e"
    assert fold_char("Ǻ") == "a"  # two marks dropped, both
    assert fold_char("ß") == "ss"
    assert fold_char("ﬁ") == "fi"
    assert fold_char("ø") == "o"


def test_a_separator_folds_to_one_space_and_a_run_character_to_itself() -> None:
    assert fold_char("-") == SEPARATOR
    assert fold_char("\u2028") == SEPARATOR
    assert fold_char("冻") == "冻"
    assert fold_char("🍵") == "🍵"


@given(st.text())
def test_folding_text_folds_each_character_on_its_own(text: str) -> None:
    """What lets a folded offset map back to one original character."""
    folded = [fold_char(c) for c in text]

    assert fold(text) == "".join(folded)
    assert original_offsets(text) == [
        sum(map(len, folded[: i + 1])) for i in range(len(text))
    ]
