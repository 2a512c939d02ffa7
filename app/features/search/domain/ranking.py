"""BM25 per field, weighted: name and aliases over description over content.

Every backend feeds this one function the same integers (document count,
field-length sums, per-term document frequencies and counts), so the same data
gives bit-identical scores, and ties fall to the storage key, everywhere.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .analysis import Counts

WEIGHTS = (5.0, 4.0, 3.0, 1.0)
"""name, aliases, description, content.

Metadata fields are not length-normalised, so a term found once in any of them
scores at least its weight (3 or more) while content saturates below
``SATURATION + 1`` (2.2): a metadata match of a term outranks any amount of it
in content.
"""
LENGTH_NORMALISATION = (0.0, 0.0, 0.0, 0.75)
SATURATION = 1.2


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What ranking needs of everything searched: files and field lengths."""

    documents: int
    length_sums: Counts


@dataclass(frozen=True, slots=True)
class Candidate:
    """A file that matched every term: its field lengths and per-term counts."""

    key: str
    lengths: Counts
    counts: tuple[Counts, ...]


@dataclass(frozen=True, slots=True)
class Ranked:
    key: str
    score: float


def inverse_document_frequency(documents: int, frequency: int) -> float:
    return math.log(1.0 + (documents - frequency + 0.5) / (frequency + 0.5))


def _field_score(count: int, length: int, average: float, field: int) -> float:
    b = LENGTH_NORMALISATION[field]
    norm = (1.0 - b) + b * (length / average)
    return (WEIGHTS[field] * count * (SATURATION + 1.0)) / (count + SATURATION * norm)


def score(
    stats: CorpusStats, frequencies: Sequence[int], candidate: Candidate
) -> float:
    """The candidate's score; terms in query order, fields in field order."""
    total = 0.0
    for frequency, counts in zip(frequencies, candidate.counts, strict=True):
        weight = inverse_document_frequency(stats.documents, frequency)
        for field, count in enumerate(counts):
            if count:
                average = stats.length_sums[field] / stats.documents
                total += weight * _field_score(
                    count, candidate.lengths[field], average, field
                )
    return total


def rank(
    stats: CorpusStats, frequencies: Sequence[int], candidates: Iterable[Candidate]
) -> list[Ranked]:
    """Best first; equal scores in ascending storage-key order."""
    ranked = [Ranked(c.key, score(stats, frequencies, c)) for c in candidates]
    ranked.sort(key=lambda r: (-r.score, r.key))
    return ranked


def page_after(
    ranked: Sequence[Ranked], after: Ranked | None, limit: int
) -> tuple[list[Ranked], bool]:
    """The ``limit`` hits ranked strictly after ``after``, and whether more follow."""
    if after is not None:
        bound = (-after.score, after.key)
        ranked = [r for r in ranked if (-r.score, r.key) > bound]
    return list(ranked[:limit]), len(ranked) > limit


_LENGTH_COLUMNS = ("len_name", "len_aliases", "len_description", "len_content")


def score_sql(terms: int) -> str:
    """``score`` as one SQL expression, for backends that rank in the database.

    It reads per-term counts from columns ``t{i}.c{field}`` and lengths from
    ``d.len_*``, takes ``score_parameters`` and performs the very same floating
    point operations in the same order (adding 0.0 where ``score`` skips a
    field changes nothing), so both give bit-identical results.
    """
    parts = ["0.0"]
    for term in range(terms):
        for field, column in enumerate(_LENGTH_COLUMNS):
            count = f"t{term}.c{field}"
            norm = f"(:keep{field} + :b{field} * (d.{column} / :avg{field}))"
            part = f"(:w{field} * {count} * :k1plus1) / ({count} + :k1 * {norm})"
            parts.append(
                f"CASE WHEN {count} = 0 THEN 0.0 ELSE :idf{term} * ({part}) END"
            )
    return " + ".join(parts)


def score_parameters(
    stats: CorpusStats, frequencies: Sequence[int]
) -> dict[str, float]:
    values: dict[str, float] = {"k1": SATURATION, "k1plus1": SATURATION + 1.0}
    for field, weight in enumerate(WEIGHTS):
        b = LENGTH_NORMALISATION[field]
        values |= {f"w{field}": weight, f"b{field}": b, f"keep{field}": 1.0 - b}
        # A field no document uses never scores; 1.0 keeps the division defined.
        total = stats.length_sums[field]
        values[f"avg{field}"] = total / stats.documents if total else 1.0
    for term, frequency in enumerate(frequencies):
        values[f"idf{term}"] = inverse_document_frequency(stats.documents, frequency)
    return values
