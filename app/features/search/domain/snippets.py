"""Snippets: the best-matching field around its matches, terms in ``**``."""

import re
from collections.abc import Sequence

from .text import WORD, Term, fold, original_offsets, tokens

SNIPPET_CHARS = 240
"""The whole snippet, marks included, is at most this many characters."""
LEAD_CHARS = 40
"""Context kept before the first match when the field is longer than a snippet."""
MARK = "**"
_SPACE = re.compile(r"\s+")

type Span = tuple[int, int, int]
"""Original start, original end, index of the term matched."""


def _folded_spans(text: str, terms: Sequence[Term]) -> list[Span]:
    spans: list[Span] = []
    for token in tokens(fold(text)):
        for index, term in enumerate(terms):
            if term.kind == WORD:
                hit = token.kind == WORD and (
                    token.text == term.text
                    or (term.prefix and token.text.startswith(term.text))
                )
                if hit:
                    spans.append((token.start, token.end, index))
                continue
            if token.kind == WORD:
                continue
            start = token.text.find(term.text)
            while start != -1:
                at = token.start + start
                spans.append((at, at + len(term.text), index))
                start = token.text.find(term.text, start + len(term.text))
    return spans


def match_spans(text: str, terms: Sequence[Term]) -> list[Span]:
    """Where each term matches in ``text``, in original offsets, without overlaps."""
    folded = _folded_spans(text, terms)
    if not folded:
        return []
    ends = original_offsets(text)
    result: list[Span] = []
    for start, end, index in sorted(folded):
        # The first original character whose folding reaches past ``start``.
        first = _first_after(ends, start)
        last = _first_after(ends, end - 1) + 1
        if result and first < result[-1][1]:
            continue
        result.append((first, last, index))
    return result


def _first_after(ends: list[int], offset: int) -> int:
    low, high = 0, len(ends)
    while low < high:
        middle = (low + high) // 2
        if ends[middle] > offset:
            high = middle
        else:
            low = middle + 1
    return low


def best_field(texts: Sequence[str], terms: Sequence[Term]) -> tuple[str, list[Span]]:
    """The field matching the most distinct terms; ties go to the later field.

    Fields are name, aliases, description, content, so content wins a tie: the
    hit already shows the name, description and aliases in full.
    """
    best: tuple[int, int] = (-1, -1)
    chosen = ("", list[Span]())
    for position, text in enumerate(texts):
        spans = match_spans(text, terms)
        rank = (len({index for *_, index in spans}), position)
        if spans and rank > best:
            best, chosen = rank, (text, spans)
    return chosen


def _window_start(text: str, spans: Sequence[Span]) -> int:
    """Start just before the match that begins the richest run of matches."""
    best, start = (-1, 0), 0
    for first, *_ in spans:
        reach = {index for s, _, index in spans if first <= s < first + SNIPPET_CHARS}
        score = (len(reach), -first)
        if score > best:
            best, start = score, first
    if len(text) <= SNIPPET_CHARS:
        return 0
    lead = max(0, start - LEAD_CHARS)
    if lead == 0 or text[lead - 1].isspace():
        return lead
    # Cut inside a word: start after it, unless it runs up to the match.
    space = text.find(" ", lead, start)
    return space + 1 if space != -1 else lead


def snippet(texts: Sequence[str], terms: Sequence[Term]) -> str:
    """At most 240 characters of the best-matching field, matches marked."""
    text, spans = best_field(texts, terms)
    if not spans:
        return ""
    begin = _window_start(text, spans)
    parts: list[str] = []
    used, cursor, stop = 0, begin, len(text)
    for start, end, _ in (s for s in spans if s[0] >= begin):
        plain = _SPACE.sub(" ", text[cursor:start])
        marked = MARK + _SPACE.sub(" ", text[start:end]) + MARK
        if used + len(plain) + len(marked) > SNIPPET_CHARS:
            stop = start
            break
        parts += (plain, marked)
        used += len(plain) + len(marked)
        cursor = end
    parts.append(_SPACE.sub(" ", text[cursor:stop])[: SNIPPET_CHARS - used])
    return "".join(parts).strip()
