"""A file's search postings: its analysis, and the rows that make the index hold it.

``index_file`` writes a file's postings as a fresh analysis of the whole file
gives them, touching only the rows that differ from what the index holds: a
word the file gains or loses changes the by-word index searches read, a count
that moves changes only the file's own rows (which lie side by side).
"""

import json
import sqlite3

from app.features.search.domain.analysis import (
    COUNT_BITS,
    DocumentAnalysis,
    analyse,
    field_texts,
)

PREFIX_INDEX = 1
"""Word prefixes up to this length get postings rows of their own: a one-letter
prefix starts so many words that scanning their postings would be slow."""
PREFIX_MARK = "\x1e"
"""Starts a prefix term's row; no word starts with it, so word ranges skip them."""
GRAM_MARK = "\x1f"
"""Starts a run gram's row (its count is 1: only its presence is used)."""
_SHIFTS = (0, COUNT_BITS[0], COUNT_BITS[0] + COUNT_BITS[1], sum(COUNT_BITS[:3]))


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


_DOCUMENT = """
INSERT INTO search_documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET version = excluded.version,
    analyser = excluded.analyser, len_name = excluded.len_name,
    len_aliases = excluded.len_aliases, len_description = excluded.len_description,
    len_content = excluded.len_content, runs_name = excluded.runs_name,
    runs_aliases = excluded.runs_aliases,
    runs_description = excluded.runs_description, runs_content = excluded.runs_content
"""
_HELD = "SELECT term, counts FROM search_terms WHERE key = ?"
_POSTING = """
INSERT INTO search_terms (key, term, counts) VALUES (?, ?, ?)
ON CONFLICT (key, term) DO UPDATE SET counts = excluded.counts
"""


def index_file(
    connection: sqlite3.Connection,
    row: tuple[str, bytes, str, str, str],
    analyser: int,
) -> None:
    """Make the index hold (key, data, description, aliases, version), in the
    open transaction."""
    key, data, description, aliases, version = row
    analysis = analyse_row(key, data, description, aliases)
    postings = term_rows(analysis)
    held: dict[str, int] = dict(connection.execute(_HELD, (key,)))
    connection.executemany(
        "DELETE FROM search_terms WHERE key = ? AND term = ?",
        [(key, term) for term in held if term not in postings],
    )
    connection.executemany(
        _POSTING,
        [(key, t, c) for t, c in postings.items() if held.get(t) != c],
    )
    fields = (*analysis.lengths, *(f.runs for f in analysis.fields))
    connection.execute(_DOCUMENT, (key, version, analyser, *fields))
