"""Ranking: field weights, frequencies, ties and paging."""

from datetime import UTC, datetime

from app.features.memory.ports import FileMetadata
from app.features.search.domain.corpus import Corpus, SearchDocument, search_corpora
from app.features.search.domain.ranking import Ranked, page_after
from app.features.search.domain.text import query_terms

META = FileMetadata("", (), ("http",), datetime(2026, 1, 1, tzinfo=UTC))


def doc(key: str, content: str, description: str = "", *aliases: str) -> SearchDocument:
    meta = FileMetadata(description, aliases, ("http",), META.last_updated)
    return SearchDocument(f"user/a/notes/{key}.md", "v", meta, content)


def ranked(query: str, *documents: SearchDocument) -> list[str]:
    hits = search_corpora([(Corpus(documents), "user/a/")], query_terms(query))
    return [hit.key.split("/")[-1] for hit in hits]


def test_name_beats_aliases_beats_description_beats_content() -> None:
    documents = (
        doc("other", "oolong " * 30),
        doc("notes", "x", "oolong"),
        doc("misc", "x", "", "oolong"),
        doc("oolong", "x"),
    )
    assert ranked("oolong", *documents) == [
        "oolong.md",
        "misc.md",
        "notes.md",
        "other.md",
    ]


def test_every_term_must_match_somewhere() -> None:
    documents = (doc("tea", "green"), doc("coffee", "green tea"), doc("x", "tea"))
    assert ranked("green tea", *documents) == ["tea.md", "coffee.md"]


def test_rarer_terms_weigh_more() -> None:
    documents = (
        doc("a", "common common common rare"),
        doc("b", "common rare rare rare"),
        doc("c", "common"),
        doc("d", "common"),
    )
    assert ranked("rare common", *documents) == ["b.md", "a.md"]
    assert ranked("common rare", *documents) == ["b.md", "a.md"]


def test_equal_scores_fall_to_key_order() -> None:
    assert ranked("tea", doc("b", "tea"), doc("a", "tea"), doc("c", "tea")) == [
        "a.md",
        "b.md",
        "c.md",
    ]


def test_a_reach_prefix_limits_documents_and_statistics() -> None:
    corpus = Corpus(
        [doc("a", "tea"), SearchDocument("user/a/x/b.md", "v", META, "tea")]
    )
    hits = search_corpora([(corpus, "user/a/x/")], query_terms("tea"))
    assert [h.key for h in hits] == ["user/a/x/b.md"]


def test_pages_continue_strictly_after_the_last_hit() -> None:
    hits = [Ranked("a", 2.0), Ranked("b", 1.0), Ranked("c", 1.0), Ranked("d", 0.5)]
    assert page_after(hits, None, 2) == (hits[:2], True)
    assert page_after(hits, hits[1], 2) == (hits[2:], False)
    assert page_after(hits, Ranked("bb", 1.0), 5) == (hits[2:], False)
