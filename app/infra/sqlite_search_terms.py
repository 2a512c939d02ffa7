"""How one word term is counted and looked up in the SQLite postings."""

import sqlite3
from collections.abc import Sequence

from app.features.search.domain.analysis import Counts
from app.features.search.domain.text import Term

from .sqlite_search_schema import keys_json

_TF = "tf_name, tf_aliases, tf_description, tf_content"
_SUMS = "sum(tf_name), sum(tf_aliases), sum(tf_description), sum(tf_content)"
_IN_KEYS = "key IN (SELECT value FROM json_each(?))"


def _upper(prefix: str) -> str:
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def term_frequency(
    db: sqlite3.Connection, term: Term, where: tuple[str, Sequence[str]]
) -> int:
    """How many files under the reach contain the word (or a word it starts)."""
    clause, values = where
    if term.prefix:
        sql = (
            "SELECT count(DISTINCT key) FROM search_words "
            f"WHERE word >= ? AND word < ? AND {clause}"
        )
        parameters = [term.text, _upper(term.text), *values]
    else:
        sql = f"SELECT count(*) FROM search_words WHERE word = ? AND {clause}"
        parameters = [term.text, *values]
    return int(db.execute(sql, parameters).fetchone()[0])


def matches_for(
    db: sqlite3.Connection,
    term: Term,
    where: tuple[str, Sequence[str]],
    keys: list[str] | None,
) -> dict[str, Counts]:
    """Per-field counts of the word in each file (of ``keys``, when given)."""
    clause, values = where
    scope: list[str] = list(values)
    if keys is not None:
        clause, scope = _IN_KEYS, [keys_json(keys)]
    if term.prefix:
        index = "INDEXED BY search_words_by_key " if keys is not None else ""
        sql = (
            f"SELECT key, {_SUMS} FROM search_words {index}"
            f"WHERE word >= ? AND word < ? AND {clause} GROUP BY key"
        )
        parameters = [term.text, _upper(term.text), *scope]
    else:
        sql = f"SELECT key, {_TF} FROM search_words WHERE word = ? AND {clause}"
        parameters = [term.text, *scope]
    rows = db.execute(sql, parameters).fetchall()
    return {row[0]: (row[1], row[2], row[3], row[4]) for row in rows}
