"""SQLite search: the postings of ``sqlite_search_postings``, read in one snapshot.

Searches run on a connection of their own, in a worker thread. Before ranking,
a search indexes the files marked pending under its reach, then ranks in one
read transaction that it first checks holds no pending file there: the index
it reads is exactly the files it reads. Document frequencies are counted from
the postings, one statement ranks and cuts the page (``sqlite_search_rank``),
and bodies are read for the returned page only.
"""

import asyncio
import sqlite3
from collections.abc import Callable, Sequence

from app.features.search.domain.analysis import Counts, matched, query_grams
from app.features.search.domain.corpus import SearchDocument
from app.features.search.domain.ranking import CorpusStats, Ranked
from app.features.search.domain.text import RUN, Term
from app.features.search.ports import SearchPage, SearchQuery
from app.infra.object_metadata import metadata_from_map
from app.infra.sqlite.connection import translate_sqlite_error
from app.infra.sqlite.rows import upper_bound
from app.infra.sqlite.search_pending import (
    DRAIN_BATCH,
    EVERYWHERE,
    Where,
    any_pending,
    index_batch,
    index_pending,
    mark_stale,
)
from app.infra.sqlite.search_rank import page_parameters, ranking_query
from app.infra.sqlite.search_schema import GRAM_MARK, keys_json
from app.infra.sqlite.search_terms import term_frequency

type Matches = dict[str, Counts]

ROUNDS = 3
"""Times a search indexes what is pending in its reach and looks again before
it ranks holding the write lock (writers kept changing files in its reach)."""


def ranges(reach: Sequence[str]) -> Where:
    """A WHERE clause selecting keys under any prefix of ``reach``, and its values."""
    clause = " OR ".join("(key >= ? AND key < ?)" for _ in reach)
    values = [bound for prefix in reach for bound in (prefix, upper_bound(prefix))]
    return f"({clause})", values


_PAGE = """
SELECT key, data, description, aliases, sources, last_updated, version, expires_at
FROM memory_objects WHERE key IN (SELECT value FROM json_each(?))
"""


class SqliteSearchIndex:
    """The SearchIndex port over the database file the storage writes."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        self._lock = asyncio.Lock()
        """One user of the connection at a time: searches and the drain."""
        self._current: set[str] = set()
        """Prefixes checked for rows other connections wrote."""

    async def search(self, query: SearchQuery) -> SearchPage:
        if not query.terms or not query.reach:
            return SearchPage(hits=(), more=False)
        return await self._run(self._search, query)

    async def drain(self) -> bool:
        """Index one piece (``DRAIN_BATCH``) of pending files; whether more remain."""
        return await self._run(self._drain)

    async def _run[**P, T](
        self, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        async with self._lock:
            try:
                return await asyncio.to_thread(work, *args, **kwargs)
            except sqlite3.Error as exc:
                raise translate_sqlite_error(exc) from exc

    def _drain(self) -> bool:
        if not any_pending(self._db, EVERYWHERE):
            return False
        return index_pending(self._db, EVERYWHERE, DRAIN_BATCH)

    def _search(self, query: SearchQuery) -> SearchPage:
        self._catch_up(query.reach)
        where = ranges(query.reach)
        for _ in range(ROUNDS):
            while any_pending(self._db, where) and index_pending(self._db, where):
                pass
            self._db.execute("BEGIN")
            try:
                if not any_pending(self._db, where):
                    return self._page(query)
            finally:
                self._db.execute("COMMIT")
        self._db.execute("BEGIN IMMEDIATE")
        try:
            while index_batch(self._db, where):
                pass
            return self._page(query)
        finally:
            self._db.execute("COMMIT")

    def _page(self, query: SearchQuery) -> SearchPage:
        page, more = self._rank(query)
        documents = self._documents([r.key for r in page])
        hits = [(r, documents[r.key]) for r in page if r.key in documents]
        return SearchPage(hits=hits, more=more)

    def _catch_up(self, reach: Sequence[str]) -> None:
        """Mark pending the rows other connections wrote under ``reach``, once
        per prefix and process."""
        for prefix in reach:
            if prefix not in self._current:
                mark_stale(self._db, (prefix, upper_bound(prefix)))
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


def _run_counts(row: sqlite3.Row, text: str) -> Counts:
    return (
        row[1].count(text),
        row[2].count(text),
        row[3].count(text),
        row[4].count(text),
    )


def _document(row: sqlite3.Row) -> SearchDocument:
    metadata = metadata_from_map(
        {
            "description": row[2],
            "aliases": row[3],
            "sources": row[4],
            "last-updated": row[5],
            "expires-at": row[7],
        }
    )
    return SearchDocument(
        row[0], row[6], metadata, bytes(row[1]).decode(errors="replace")
    )
