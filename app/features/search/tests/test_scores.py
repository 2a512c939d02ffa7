"""Exact BM25 scores of tiny corpora, worked out by hand.

BM25 with k1 = 1.2: a term's weight is ln(1 + (N - n + 0.5) / (n + 0.5)) for N
files of which n hold it; a field holding it c times adds
weight * w * c * 2.2 / (c + 1.2 * norm), w being 5, 4, 3, 1 for name, aliases,
description, content and norm = 0.25 + 0.75 * length / average length for
content, 1 for the metadata fields.
"""

import math
import sqlite3
from contextlib import closing

import pytest

from app.features.search.domain.corpus import Corpus, SearchDocument, search_corpora
from app.features.search.domain.ranking import (
    Candidate,
    CorpusStats,
    score,
    score_parameters,
    score_sql,
)
from app.features.search.domain.text import query_terms

from .test_ranking import META, doc


def scores(query: str, *documents: SearchDocument) -> dict[str, float]:
    hits = search_corpora([(Corpus(documents), "user/a/")], query_terms(query))
    return {hit.key.split("/")[-1]: hit.score for hit in hits}


def test_content_saturates_and_is_normalised_by_its_length() -> None:
    documents = (
        doc("a", "oolong oolong green"),
        doc("b", "green"),
        doc("c", "black tea"),
        doc("d", "white"),
    )
    oolong = math.log(1 + 3.5 / 1.5)  # 4 files, 1 holds it
    green = math.log(1 + 2.5 / 2.5)  # 4 files, 2 hold it
    norm_a = 0.25 + 0.75 * 3 / (7 / 4)  # 3 words of 7 in 4 files
    norm_b = 0.25 + 0.75 * 1 / (7 / 4)

    assert scores("oolong green", *documents) == pytest.approx(
        {
            "a.md": oolong * 2 * 2.2 / (2 + 1.2 * norm_a)
            + green * 2.2 / (1 + 1.2 * norm_a)
        }
    )
    assert scores("green", *documents) == pytest.approx(
        {
            "a.md": green * 2.2 / (1 + 1.2 * norm_a),
            "b.md": green * 2.2 / (1 + 1.2 * norm_b),
        }
    )


def test_one_match_in_a_metadata_field_scores_its_weight_whatever_its_length() -> None:
    documents = (
        doc("tea", "x"),
        doc("alias", "x", "", "tea"),
        doc("described", "x", "tea and a long description of other things"),
        doc("other", "coffee"),
    )
    weight = math.log(1 + 1.5 / 3.5)  # 4 files, 3 hold it

    assert scores("tea", *documents) == pytest.approx(
        {"tea.md": 5 * weight, "alias.md": 4 * weight, "described.md": 3 * weight}
    )


def test_a_prefix_counts_every_word_it_starts_in_a_field() -> None:
    documents = (doc("tea-tee", "x"), doc("other", "x"))
    weight = math.log(2)  # 2 files, 1 holds a word starting "te"

    assert scores("te", *documents) == pytest.approx(
        {"tea-tee.md": weight * 5 * 2 * 2.2 / (2 + 1.2)}
    )


def test_each_file_under_a_prefix_counts_once_in_the_statistics() -> None:
    corpus = Corpus(
        [
            doc("a", "tea"),
            doc("b", "coffee"),
            SearchDocument("user/b/n/c.md", "v", META, "tea"),
        ]
    )
    hits = search_corpora([(corpus, "user/a/")], query_terms("tea"))
    norm = 0.25 + 0.75 * 1 / (2 / 2)

    assert [(h.key, h.score) for h in hits] == [
        (
            "user/a/notes/a.md",
            pytest.approx(math.log(1 + 1.5 / 1.5) * 2.2 / (1 + 1.2 * norm)),
        )
    ]


CASES = [
    (
        CorpusStats(4, (4, 0, 9, 20)),
        [1, 3],
        Candidate("k", (1, 0, 2, 7), ((1, 0, 0, 2), (0, 0, 1, 3))),
    ),
    (CorpusStats(7, (9, 3, 0, 40)), [2], Candidate("k", (2, 3, 0, 1), ((0, 1, 0, 1),))),
    (
        CorpusStats(1, (1, 1, 1, 1)),
        [1, 1, 1],
        Candidate("k", (1, 1, 1, 1), ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 1))),
    ),
]


@pytest.mark.parametrize(("stats", "frequencies", "candidate"), CASES)
def test_the_sql_twin_gives_bit_identical_scores(
    stats: CorpusStats, frequencies: list[int], candidate: Candidate
) -> None:
    """A backend ranking in SQLite and one ranking in Python tie and page alike."""
    terms = len(frequencies)
    counts = ", ".join(
        f"(SELECT {', '.join(f':t{t}f{f} AS c{f}' for f in range(4))}) AS t{t}"
        for t in range(terms)
    )
    columns = ("len_name", "len_aliases", "len_description", "len_content")
    lengths = ", ".join(f":len{f} AS {column}" for f, column in enumerate(columns))
    sql = f"SELECT {score_sql(terms)} FROM {counts}, (SELECT {lengths}) AS d"
    values: dict[str, object] = dict(score_parameters(stats, frequencies))
    for t, per_field in enumerate(candidate.counts):
        values |= {f"t{t}f{f}": count for f, count in enumerate(per_field)}
    values |= {f"len{f}": length for f, length in enumerate(candidate.lengths)}

    with closing(sqlite3.connect(":memory:")) as db:
        (found,) = db.execute(sql, values).fetchone()

    assert found == score(stats, frequencies, candidate)


def test_a_run_term_counts_its_occurrences_and_runs_count_by_character() -> None:
    documents = (doc("a", "冻顶乌龙 冻顶"), doc("b", "乌龙茶"), doc("c", "tea"))
    weight = math.log(1 + 2.5 / 1.5)  # 3 files, 1 holds it
    norm = 0.25 + 0.75 * 6 / (10 / 3)  # 6 run characters of 10 in 3 files

    assert scores("冻顶", *documents) == pytest.approx(
        {"a.md": weight * 2 * 2.2 / (2 + 1.2 * norm)}
    )


def test_a_word_no_file_holds_matches_nothing() -> None:
    """Only the last term is a prefix: "absent" does not match "absently"."""
    assert scores("absent tea", doc("a", "tea"), doc("b", "tea absently")) == {}


def test_statistics_add_over_every_corpus_in_reach() -> None:
    mine = Corpus([doc("a", "tea"), doc("b", "coffee")])
    ours = Corpus(
        [
            SearchDocument("team/t/n/c.md", "v", META, "tea"),
            SearchDocument("team/t/n/d.md", "v", META, "coffee"),
        ]
    )
    hits = search_corpora([(mine, "user/a/"), (ours, "team/t/")], query_terms("tea"))
    expected = math.log(1 + 2.5 / 2.5) * 2.2 / (1 + 1.2)  # 4 files, 2 hold it

    assert [(h.key, h.score) for h in hits] == [
        ("team/t/n/c.md", pytest.approx(expected)),
        ("user/a/notes/a.md", pytest.approx(expected)),
    ]
