"""What search keeps of one file: per-field word counts, runs and lengths."""

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .text import RUN, Term, fold, words_and_runs

FIELDS = ("name", "aliases", "description", "content")
RUN_SEPARATOR = " "
"""Joins a field's runs; no run or run term contains it, so none spans two."""

type Counts = tuple[int, int, int, int]
"""One integer per field, in ``FIELDS`` order."""

COUNT_BITS = (12, 12, 12, 27)
"""Bits each field's count takes when four counts pack into one integer."""
FOLDED_LIMITS = tuple((1 << bits) - 4 for bits in COUNT_BITS)
"""Folded characters of each field that are searched: any word count, and any
sum of counts over the words of one file, then fits its ``COUNT_BITS``. Only a
name or description of thousands of words reaches the limit."""


@dataclass(frozen=True, slots=True)
class FieldAnalysis:
    words: Counter[str]
    runs: str
    length: int
    """Words plus run characters: the field's length for ranking."""


def analyse_field(text: str, limit: int) -> FieldAnalysis:
    words, runs = words_and_runs(fold(text)[:limit])
    length = len(words) + sum(map(len, runs))
    return FieldAnalysis(Counter(words), RUN_SEPARATOR.join(runs), length)


def field_texts(
    name: str, aliases: Sequence[str], description: str, content: str
) -> tuple[str, str, str, str]:
    """The four searchable fields as text; aliases one per line."""
    return (name, "\n".join(aliases), description, content)


@dataclass(frozen=True, slots=True)
class DocumentAnalysis:
    fields: tuple[FieldAnalysis, ...]

    @property
    def lengths(self) -> Counts:
        a, b, c, d = (f.length for f in self.fields)
        return (a, b, c, d)

    def word_rows(self) -> list[tuple[str, Counts]]:
        """Every distinct word with its count in each field, sorted."""
        name, aliases, description, content = (f.words for f in self.fields)
        vocabulary = sorted({*name, *aliases, *description, *content})
        return [
            (w, (name[w], aliases[w], description[w], content[w])) for w in vocabulary
        ]

    def run_counts(self, run: str) -> Counts:
        a, b, c, d = (f.runs.count(run) for f in self.fields)
        return (a, b, c, d)

    def grams(self) -> set[str]:
        """Every character and character pair inside a run: the run filter."""
        return {g for f in self.fields for g in run_grams(f.runs)}


def analyse(texts: Iterable[str]) -> DocumentAnalysis:
    fields = zip(texts, FOLDED_LIMITS, strict=True)
    return DocumentAnalysis(tuple(analyse_field(t, limit) for t, limit in fields))


def run_grams(runs: str) -> set[str]:
    found: set[str] = set()
    for run in runs.split(RUN_SEPARATOR):
        found.update(run)
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return found


def query_grams(term: Term) -> set[str]:
    """Grams every file containing the run term contains."""
    assert term.kind == RUN
    if len(term.text) == 1:
        return {term.text}
    return {term.text[i : i + 2] for i in range(len(term.text) - 1)}


def add_counts(left: Counts, right: Counts) -> Counts:
    return (
        left[0] + right[0],
        left[1] + right[1],
        left[2] + right[2],
        left[3] + right[3],
    )


def matched(counts: Counts) -> bool:
    return any(counts)
