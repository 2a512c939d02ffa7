"""How many files under the reach contain a word term, from the SQLite postings."""

import sqlite3
from collections.abc import Sequence

from app.features.search.domain.text import Term
from app.infra.sqlite.search_schema import PREFIX_INDEX, PREFIX_MARK

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
    if term.prefix and len(term.text) <= PREFIX_INDEX:
        sql = f"SELECT count(*) FROM search_terms WHERE term = ? AND {clause}"
        parameters = [PREFIX_MARK + term.text, *values]
    elif term.prefix:
        sql = (
            "SELECT count(DISTINCT key) FROM search_terms "
            f"WHERE term >= ? AND term < ? AND {clause}"
        )
        parameters = [term.text, _upper(term.text), *values]
    else:
        sql = f"SELECT count(*) FROM search_terms WHERE term = ? AND {clause}"
        parameters = [term.text, *values]
    return int(db.execute(sql, parameters).fetchone()[0])
