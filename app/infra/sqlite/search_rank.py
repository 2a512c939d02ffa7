"""One SQL statement that joins every term's postings and ranks in the database.

The rarest term drives the join; every other term is found by primary key
(exact words) or from its grouped postings (prefixes, runs). Scores come from
``score_sql``, the database twin of the pure ranking function, so SQLite sorts
and cuts the page without handing every match to Python.
"""

import json
from collections.abc import Mapping, Sequence

from app.features.search.domain.analysis import Counts
from app.features.search.domain.ranking import (
    CorpusStats,
    Ranked,
    score_parameters,
    score_sql,
)
from app.features.search.domain.text import RUN, Term
from app.infra.sqlite.rows import upper_bound
from app.infra.sqlite.search_schema import PREFIX_INDEX, PREFIX_MARK, UNPACKED

_COUNTS = ", ".join(f"{column} AS c{f}" for f, column in enumerate(UNPACKED))
_SUMS = ", ".join(f"sum({column}) AS c{f}" for f, column in enumerate(UNPACKED))
_RUN_ROWS = (
    "SELECT value ->> 0 AS key, value ->> 1 AS c0, value ->> 2 AS c1, "
    "value ->> 3 AS c2, value ->> 4 AS c3 FROM json_each(:run{i})"
)


_BY_TERM = "INDEXED BY search_terms_by_term"
"""A prefix's rows are a range of terms: never a scan of the reach's postings."""
_AFTER = ":after IS NULL OR score < :after OR (score = :after AND key > :after_key)"


def reach_clause(reach: Sequence[str]) -> tuple[str, dict[str, str]]:
    """Keys under any prefix of ``reach``, as a clause with named parameters."""
    parts: list[str] = []
    values: dict[str, str] = {}
    for n, prefix in enumerate(reach):
        parts.append(f"(key >= :low{n} AND key < :high{n})")
        values |= {f"low{n}": prefix, f"high{n}": upper_bound(prefix)}
    return "(" + " OR ".join(parts) + ")", values


def _source(i: int, term: Term, where: str) -> tuple[str, dict[str, object]]:
    if term.kind == RUN:
        return f"({_RUN_ROWS.format(i=i)})", {}
    if term.prefix and len(term.text) <= PREFIX_INDEX:
        sql = (
            f"(SELECT key, {_COUNTS} FROM search_terms "
            f"WHERE term = :word{i} AND {where})"
        )
        return sql, {f"word{i}": PREFIX_MARK + term.text}
    if term.prefix:
        sql = (
            f"(SELECT key, {_SUMS} FROM search_terms {_BY_TERM} WHERE term >= :word{i} "
            f"AND term < :upto{i} AND {where} GROUP BY key)"
        )
        return sql, {f"word{i}": term.text, f"upto{i}": upper_bound(term.text)}
    sql = f"(SELECT key, {_COUNTS} FROM search_terms WHERE term = :word{i} AND {where})"
    return sql, {f"word{i}": term.text}


def ranking_query(
    reach: Sequence[str],
    terms: Sequence[Term],
    order: Sequence[int],
    runs: Mapping[int, Mapping[str, Counts]],
) -> tuple[str, dict[str, object]]:
    """The statement ranking files that match every term, rarest term first.

    It takes ``page_parameters`` besides the parameters returned here.
    """
    where, values = reach_clause(reach)
    parameters: dict[str, object] = dict(values)
    joins: list[str] = []
    first = order[0]
    for i in order:
        source, extra = _source(i, terms[i], where)
        parameters |= extra
        if i in runs:
            parameters[f"run{i}"] = json.dumps(
                [[key, *counts] for key, counts in sorted(runs[i].items())],
                ensure_ascii=False,
            )
        on = "" if i == first else f" ON t{i}.key = t{first}.key"
        joins.append(f"{source} AS t{i}{on}")
    score = score_sql(len(terms))
    sql = (
        f"SELECT key, score FROM (SELECT d.key AS key, {score} AS score "
        f"FROM {' CROSS JOIN '.join(joins)} "
        f"CROSS JOIN search_documents AS d INDEXED BY search_documents_lengths "
        f"ON d.key = t{first}.key) "
        f"WHERE {_AFTER} ORDER BY score DESC, key LIMIT :limit"
    )
    return sql, parameters


def page_parameters(
    stats: CorpusStats,
    frequencies: Sequence[int],
    after: Ranked | None,
    limit: int,
) -> dict[str, object]:
    """Scoring constants, the position to continue after, and one hit more."""
    return {
        **score_parameters(stats, frequencies),
        "after": None if after is None else after.score,
        "after_key": None if after is None else after.key,
        "limit": limit + 1,
    }
