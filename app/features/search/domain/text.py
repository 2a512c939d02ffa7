"""Text folding and tokens: case- and diacritic-free words and no-space runs.

Every character folds on its own (NFKD, case fold, NFKD again, letters such as
"đ" or "ø" to their base, combining marks dropped), so a position in folded
text maps back to one original character.
Letters and digits of space-separated scripts form *words*; letters of scripts
written without spaces (CJK, Thai, Lao, Khmer, Myanmar, ...) and pictographic
symbols form *runs*, which match as substrings. Everything else separates.
"""

import re
import unicodedata
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal

WORD: Literal["w"] = "w"
RUN: Literal["r"] = "r"
_SEPARATOR = " "

# Scripts written without spaces between words, as code-point ranges.
_RUN_RANGES = (
    (0x0E00, 0x0FFF),  # Thai, Lao, Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x1950, 0x19FF),  # Tai Le, New Tai Lue, Khmer symbols
    (0x1A20, 0x1AAF),  # Tai Tham
    (0x1B00, 0x1B7F),  # Balinese
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3000, 0x31FF),  # CJK marks, kana, bopomofo
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA000, 0xA4CF),  # Yi
    (0xA980, 0xAADF),  # Javanese, Myanmar extensions, Tai Viet
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x1B000, 0x1B2FF),  # kana supplements
    (0x20000, 0x3FFFF),  # CJK extensions B and later
)


def _in_run_script(code: int) -> bool:
    return any(low <= code <= high for low, high in _RUN_RANGES)


def kind_of(char: str) -> str:
    """``WORD``, ``RUN`` or a space: what ``char`` is part of, by its category."""
    category = unicodedata.category(char)
    if category == "So" or (category[0] in "LNM" and _in_run_script(ord(char))):
        return RUN
    if category[0] in "LN" or category in ("Mc", "Me"):
        return WORD
    return _SEPARATOR


# Latin letters whose marks are part of the letter, so NFKD keeps them whole.
_BASE_LETTERS = str.maketrans(
    {"đ": "d", "ð": "d", "ħ": "h", "\u0131": "i", "ł": "l", "ø": "o", "ŧ": "t"}
    | {"ƀ": "b", "ƈ": "c", "ɗ": "d", "ƒ": "f", "ɠ": "g", "ƙ": "k", "ƶ": "z"}
    | {"æ": "ae", "œ": "oe", "þ": "th", "ĸ": "k"}
)


def fold_char(char: str) -> str:
    """One character folded, as ``fold`` maps it (its tables cache this)."""
    decomposed = unicodedata.normalize("NFKD", char)
    folded = unicodedata.normalize("NFKD", decomposed.casefold())
    folded = folded.translate(_BASE_LETTERS)
    kept = (c for c in folded if unicodedata.category(c) != "Mn")
    return "".join(c if kind_of(c) != _SEPARATOR else _SEPARATOR for c in kept)


MAX_FOLD_GROWTH = 18
"""No character folds to more characters than this (U+FDFA folds to 18)."""


class _FoldTable(dict[int, str]):
    """``str.translate`` table folding each character, filled on first use."""

    def __missing__(self, code: int) -> str:
        folded = self[code] = fold_char(chr(code))
        return folded


class _KindTable(dict[int, str]):
    """``str.translate`` table from a folded character to its kind letter."""

    def __missing__(self, code: int) -> str:
        kind = self[code] = kind_of(chr(code))
        return kind


_FOLD = _FoldTable()
_KINDS = _KindTable()
_TOKEN = re.compile(r"w+|r+")


def fold(text: str) -> str:
    """``text`` folded: lower case, no diacritics, separators as spaces."""
    return text.translate(_FOLD)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    start: int
    """Offset in the folded text."""
    end: int


def pieces(folded: str) -> list[tuple[str, str]]:
    """(kind, text) of each word and run of folded text, in order: ``tokens``
    without offsets, for indexing a whole file (no object per token)."""
    kinds = folded.translate(_KINDS)
    return [
        (kinds[start], folded[start:end])
        for start, end in (m.span() for m in _TOKEN.finditer(kinds))
    ]


def words_and_runs(folded: str) -> tuple[list[str], list[str]]:
    """The words and the runs of folded text, each in order: ``pieces`` by kind."""
    if RUN not in folded.translate(_KINDS):
        # Separators fold to a space and no word character is a space to
        # ``str.split``: without runs, the words are the split, at C speed.
        return folded.split(), []
    words: list[str] = []
    runs: list[str] = []
    for kind, piece in pieces(folded):
        (words if kind == WORD else runs).append(piece)
    return words, runs


def tokens(folded: str) -> list[Token]:
    """The words and runs of folded text, in order."""
    kinds = folded.translate(_KINDS)
    return [
        Token(kinds[m.start()], folded[m.start() : m.end()], m.start(), m.end())
        for m in _TOKEN.finditer(kinds)
    ]


def original_offsets(text: str) -> list[int]:
    """For each original character, the folded offset just after it."""
    return list(accumulate(len(_FOLD[ord(c)]) for c in text))


@dataclass(frozen=True, slots=True)
class Term:
    """One query term: a word (exact, or a prefix when last) or a run."""

    kind: str
    text: str
    prefix: bool = False


def query_terms(query: str) -> tuple[Term, ...]:
    """The distinct terms of a query; the last one matches as a prefix.

    Query text is data: operators, quotes and punctuation only separate.
    """
    found = tokens(fold(query))
    terms: list[Term] = []
    for index, token in enumerate(found):
        last = index == len(found) - 1 and token.kind == WORD
        term = Term(token.kind, token.text, prefix=last)
        if term not in terms:
            terms.append(term)
    return tuple(terms)
