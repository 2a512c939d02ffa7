"""An in-process search index of one entity's files, and ranking over several."""

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from app.features.memory.ports import FileMetadata

from .analysis import (
    Counts,
    DocumentAnalysis,
    add_counts,
    analyse,
    field_texts,
    matched,
)
from .ranking import Candidate, CorpusStats, Ranked, rank
from .text import WORD, Term

_NONE: Counts = (0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class SearchDocument:
    """A file as search sees it: storage key, version, metadata and text."""

    key: str
    version: str
    metadata: FileMetadata
    content: str

    @property
    def name(self) -> str:
        return self.key.rsplit("/", 1)[-1].removesuffix(".md")

    def texts(self) -> tuple[str, str, str, str]:
        meta = self.metadata
        return field_texts(self.name, meta.aliases, meta.description, self.content)


class Corpus:
    """Documents in key order with a word index; runs are scanned directly."""

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self.documents = sorted(documents, key=lambda d: d.key)
        self.keys = [d.key for d in self.documents]
        self.analyses: list[DocumentAnalysis] = [
            analyse(d.texts()) for d in self.documents
        ]
        self._postings: dict[str, dict[int, Counts]] = {}
        for index, analysis in enumerate(self.analyses):
            for word, counts in analysis.word_rows():
                self._postings.setdefault(word, {})[index] = counts
        self._vocabulary = sorted(self._postings)

    def span(self, prefix: str) -> range:
        """Indexes of the documents whose key starts with ``prefix``."""
        low = bisect.bisect_left(self.keys, prefix)
        high = bisect.bisect_left(self.keys, prefix + "\U0010ffff", lo=low)
        return range(low, high)

    def matches(self, term: Term, span: range) -> dict[int, Counts]:
        """Per-field counts of ``term`` in each document of ``span`` it occurs in."""
        if term.kind != WORD:
            found = {i: self.analyses[i].run_counts(term.text) for i in span}
            return {i: counts for i, counts in found.items() if matched(counts)}
        words = [term.text]
        if term.prefix:
            low = bisect.bisect_left(self._vocabulary, term.text)
            high = bisect.bisect_left(self._vocabulary, term.text + "\U0010ffff")
            words = self._vocabulary[low:high]
        result: dict[int, Counts] = {}
        for word in words:
            for index, counts in self._postings.get(word, {}).items():
                if index in span:
                    result[index] = add_counts(result.get(index, _NONE), counts)
        return result


def search_corpora(
    reach: Sequence[tuple[Corpus, str]], terms: Sequence[Term]
) -> list[Ranked]:
    """Rank every document under each (corpus, key prefix) pair of ``reach``."""
    if not terms:
        return []
    spans = [(corpus, corpus.span(prefix)) for corpus, prefix in reach]
    documents = sum(len(span) for _, span in spans)
    sums = _NONE
    for corpus, span in spans:
        for index in span:
            sums = add_counts(sums, corpus.analyses[index].lengths)
    frequencies = [0] * len(terms)
    candidates: list[Candidate] = []
    for corpus, span in spans:
        per_term = [corpus.matches(term, span) for term in terms]
        for position, found in enumerate(per_term):
            frequencies[position] += len(found)
        common = set[int](per_term[0]).intersection(*per_term[1:])
        candidates.extend(
            Candidate(
                corpus.keys[i],
                corpus.analyses[i].lengths,
                tuple(found[i] for found in per_term),
            )
            for i in common
        )
    return rank(CorpusStats(documents, sums), frequencies, candidates)
