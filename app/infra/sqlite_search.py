"""SQLite search: the postings the triggers keep, read in one snapshot per query.

Searches run on a connection of their own, in a worker thread, inside one
transaction, so a query never sees half of a concurrent write and never holds
up the write connection. Document frequencies are counted from the postings,
one statement ranks and cuts the page (``sqlite_search_rank``), and bodies are
read for the returned page only.
"""

import asyncio
import sqlite3
from collections.abc import Sequence
from typing import Any

from app.features.search.domain.analysis import Counts, matched, query_grams
from app.features.search.domain.corpus import SearchDocument
from app.features.search.domain.ranking import CorpusStats, Ranked
from app.features.search.domain.text import RUN, Term
from app.features.search.ports import SearchPage, SearchQuery

from .object_metadata import metadata_from_map
from .sqlite_connection import BUSY_TIMEOUT_MS, Synchronous, translate_sqlite_error
from .sqlite_rows import upper_bound
from .sqlite_search_rank import page_parameters, ranking_query
from .sqlite_search_schema import (
    ANALYSER_VERSION,
    GRAM_MARK,
    forget_rows,
    index_rows,
    keys_json,
)
from .sqlite_search_terms import term_frequency

type Matches = dict[str, Counts]


def ranges(reach: Sequence[str]) -> tuple[str, list[str]]:
    """A WHERE clause selecting keys under any prefix of ``reach``, and its values."""
    clause = " OR ".join("(key >= ? AND key < ?)" for _ in reach)
    values = [bound for prefix in reach for bound in (prefix, upper_bound(prefix))]
    return f"({clause})", values


_STALE = f"""
SELECT m.key, m.data, m.description, m.aliases, m.version FROM memory_objects m
LEFT JOIN search_documents d ON d.key = m.key
WHERE m.key >= ? AND m.key < ? AND m.tombstone = 0
  AND (d.key IS NULL OR d.version != m.version OR d.analyser != {ANALYSER_VERSION})
"""
_ORPHANS = """
SELECT d.key FROM search_documents d LEFT JOIN memory_objects m ON m.key = d.key
WHERE d.key >= ? AND d.key < ? AND m.key IS NULL
"""
_PAGE = """
SELECT key, data, description, aliases, sources, last_updated, version
FROM memory_objects WHERE key IN (SELECT value FROM json_each(?))
"""


class SqliteSearchIndex:
    """The SearchIndex port over the database file the storage writes."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        self._lock = asyncio.Lock()
        self._current: set[str] = set()
        """Prefixes brought up to date since this process opened the file."""

    async def search(self, query: SearchQuery) -> SearchPage:
        if not query.terms or not query.reach:
            return SearchPage(hits=(), more=False)
        async with self._lock:
            try:
                return await asyncio.to_thread(self._search, query)
            except sqlite3.Error as exc:
                raise translate_sqlite_error(exc) from exc

    def _search(self, query: SearchQuery) -> SearchPage:
        self._catch_up(query.reach)
        self._db.execute("BEGIN")
        try:
            page, more = self._rank(query)
            documents = self._documents([r.key for r in page])
        finally:
            self._db.execute("COMMIT")
        hits = [(r, documents[r.key]) for r in page if r.key in documents]
        return SearchPage(hits=hits, more=more)

    def _catch_up(self, reach: Sequence[str]) -> None:
        """Index rows other connections wrote under ``reach``, once per process."""
        for prefix in reach:
            if prefix in self._current:
                continue
            bounds = (prefix, upper_bound(prefix))
            self._db.execute("BEGIN IMMEDIATE")
            try:
                stale = self._db.execute(_STALE, bounds).fetchall()
                orphans = [row[0] for row in self._db.execute(_ORPHANS, bounds)]
                index_rows(self._db, stale)
                forget_rows(self._db, orphans)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self._current.add(prefix)

    def _stats(self, reach: Sequence[str]) -> CorpusStats:
        where, values = ranges(reach)
        row = self._db.execute(
            "SELECT count(*), total(len_name), total(len_aliases), "
            f"total(len_description), total(len_content) FROM search_documents "
            f"WHERE {where}",
            values,
        ).fetchone()
        return CorpusStats(row[0], (int(row[1]), int(row[2]), int(row[3]), int(row[4])))

    def _rank(self, query: SearchQuery) -> tuple[list[Ranked], bool]:
        reach, terms, limit = query.reach, query.terms, query.limit
        stats = self._stats(reach)
        where = ranges(reach)
        runs: dict[int, Matches] = {}
        frequencies: list[int] = []
        for position, term in enumerate(terms):
            if term.kind == RUN:
                runs[position] = self._run_matches(term, where)
                frequencies.append(len(runs[position]))
            else:
                frequencies.append(term_frequency(self._db, term, where))
        if stats.documents == 0 or not all(frequencies):
            return [], False
        order = sorted(range(len(terms)), key=lambda p: (frequencies[p], p))
        sql, parameters = ranking_query(reach, terms, order, runs)
        parameters |= page_parameters(stats, frequencies, query.after, limit)
        rows = self._db.execute(sql, parameters).fetchall()
        ranked = [Ranked(row[0], row[1]) for row in rows]
        return ranked[:limit], len(ranked) > limit

    def _run_matches(self, term: Term, where: tuple[str, list[str]]) -> Matches:
        clause, values = where
        keys: set[str] | None = None
        for gram in sorted(query_grams(term)):
            rows = self._db.execute(
                f"SELECT key FROM search_terms WHERE term = ? AND {clause}",
                [GRAM_MARK + gram, *values],
            ).fetchall()
            found = {row[0] for row in rows}
            keys = found if keys is None else keys & found
            if not keys:
                return {}
        rows = self._db.execute(
            "SELECT key, runs_name, runs_aliases, runs_description, runs_content "
            "FROM search_documents WHERE key IN (SELECT value FROM json_each(?))",
            (keys_json(sorted(keys or ())),),
        ).fetchall()
        counted = {row[0]: _run_counts(row, term.text) for row in rows}
        return {key: counts for key, counts in counted.items() if matched(counts)}

    def _documents(self, keys: list[str]) -> dict[str, SearchDocument]:
        rows = self._db.execute(_PAGE, (keys_json(keys),)).fetchall()
        return {row[0]: _document(row) for row in rows}


def _run_counts(row: Any, text: str) -> Counts:
    return (
        row[1].count(text),
        row[2].count(text),
        row[3].count(text),
        row[4].count(text),
    )


def _document(row: Any) -> SearchDocument:
    metadata = metadata_from_map(
        {
            "description": row[2],
            "aliases": row[3],
            "sources": row[4],
            "last-updated": row[5],
        }
    )
    return SearchDocument(
        row[0], row[6], metadata, bytes(row[1]).decode(errors="replace")
    )


def open_search_connection(path: str, synchronous: Synchronous) -> sqlite3.Connection:
    """The search connection: used from worker threads, one at a time.

    It writes only when it brings rows other connections wrote up to date.
    """
    connection = sqlite3.connect(
        path,
        isolation_level=None,
        check_same_thread=False,
        timeout=BUSY_TIMEOUT_MS / 1000,
    )
    connection.execute("PRAGMA secure_delete = ON")
    connection.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    return connection
