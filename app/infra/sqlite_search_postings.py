"""A file's search postings, as the write triggers' analysis function gives them.

A new file, a new description or aliases, or a row not indexed at the version
being replaced is analysed whole (its postings are replaced). An edit of the
content alone (an appended line, a replaced fact, a rewrite keeping most lines)
analyses only the lines it removed and added and moves their words' counts in
the postings the row is indexed under: the result equals a fresh analysis of
the whole file (``tests/test_sqlite_search_postings.py`` holds them equal).
"""

import json
from typing import Any, NamedTuple

from app.features.search.domain.analysis import (
    COUNT_BITS,
    FOLDED_LIMITS,
    DocumentAnalysis,
    analyse,
    field_texts,
)
from app.features.search.domain.line_changes import (
    WordChange,
    line_change,
    word_change,
)

PREFIX_INDEX = 1
"""Word prefixes up to this length get postings rows of their own: a one-letter
prefix starts so many words that scanning their postings would be slow."""
PREFIX_MARK = "\x1e"
"""Starts a prefix term's row; no word starts with it, so word ranges skip them."""
GRAM_MARK = "\x1f"
"""Starts a run gram's row (its count is 1: only its presence is used)."""
_SHIFTS = (0, COUNT_BITS[0], COUNT_BITS[0] + COUNT_BITS[1], sum(COUNT_BITS[:3]))
_CONTENT = 3
"""The content's place in the fields (and in the document row's lengths)."""


def analyse_row(
    key: str, data: bytes, description: str, aliases: str
) -> DocumentAnalysis:
    name = key.rsplit("/", 1)[-1].removesuffix(".md")
    content = bytes(data).decode(errors="replace")
    texts = field_texts(name, json.loads(aliases), description, content)
    return analyse(texts)


def term_rows(analysis: DocumentAnalysis) -> dict[str, int]:
    """Postings of one file, term to packed counts: words, prefixes and grams.

    Packed counts add up field by field without carrying (``FOLDED_LIMITS``),
    so a prefix's row is the plain sum of its words' rows.
    """
    rows: dict[str, int] = {}
    for shift, field in zip(_SHIFTS, analysis.fields, strict=True):
        for word, count in field.words.items():
            rows[word] = rows.get(word, 0) | count << shift
    prefixes: dict[str, int] = {}
    for word, packed in rows.items():
        prefix = PREFIX_MARK + word[:PREFIX_INDEX]
        prefixes[prefix] = prefixes.get(prefix, 0) + packed
    grams = dict.fromkeys((GRAM_MARK + g for g in analysis.grams()), 1)
    return rows | prefixes | grams


class Previous(NamedTuple):
    """The row a write replaces, and its document row if indexed at its version."""

    data: bytes
    description: str
    aliases: str
    document: str | None
    """JSON ``[len_name, len_aliases, len_description, len_content, runs_name,
    runs_aliases, runs_description, runs_content]``."""


def analysis_json(
    key: str,
    data: bytes,
    description: str,
    aliases: str,
    previous: Previous | None = None,
) -> str:
    """The row's analysis as JSON: lengths (``l``), runs (``r``), what to add
    to each postings row it changes (``d``), the rows that may reach 0 and go
    (``z``), and ``w`` when the file's postings are replaced by ``d``.

    A trigger calls this once per statement.
    """
    if previous is not None:
        edited = _edited_json(data, description, aliases, previous)
        if edited is not None:
            return edited
    analysis = analyse_row(key, data, description, aliases)
    lengths, runs = list(analysis.lengths), [f.runs for f in analysis.fields]
    return json.dumps(
        {"w": 1, "l": lengths, "r": runs, "d": term_rows(analysis), "z": []},
        ensure_ascii=False,
    )


def _edited_json(
    data: bytes, description: str, aliases: str, previous: Previous
) -> str | None:
    """``analysis_json`` from the changed lines alone, or None (analyse whole)."""
    if previous.document is None or (description, aliases) != (
        previous.description,
        previous.aliases,
    ):
        return None
    old, new = previous.data, data
    change = word_change(
        line_change(old, new), FOLDED_LIMITS[_CONTENT], max(len(old), len(new))
    )
    if change is None:
        return None
    document = json.loads(previous.document)
    lengths: list[int] = document[:4]
    lengths[_CONTENT] += change.length
    steps = _count_steps(change)
    falling = [term for term, step in steps.items() if step < 0]
    return json.dumps(
        {"w": 0, "l": lengths, "r": document[4:], "d": steps, "z": falling},
        ensure_ascii=False,
    )


def _count_steps(change: WordChange) -> dict[str, int]:
    """What to add to each postings row the content's word change moves."""
    steps: dict[str, int] = {}
    prefixes: dict[str, int] = {}
    shift = _SHIFTS[_CONTENT]
    for word, delta in change.counts.items():
        if delta:
            # Each word is counted once; only its prefix's row gathers several.
            steps[word] = step = delta << shift
            prefix = PREFIX_MARK + word[:PREFIX_INDEX]
            prefixes[prefix] = prefixes.get(prefix, 0) + step
    return steps | {prefix: step for prefix, step in prefixes.items() if step}


def sql_analysis(*values: Any) -> str:
    """The triggers' function: (key, data, description, aliases) of the row
    written, then, on an update, (data, description, aliases) of the row
    replaced and its document row (``Previous.document``)."""
    key, data, description, aliases, *replaced = values
    previous = None
    if replaced and replaced[0] is not None:
        old_data, old_description, old_aliases, document = replaced
        previous = Previous(
            bytes(old_data),
            str(old_description),
            str(old_aliases),
            None if document is None else str(document),
        )
    return analysis_json(
        str(key),
        bytes(data),
        str(description),
        str(aliases),
        previous,
    )
