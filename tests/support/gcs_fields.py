"""GCS's partial responses (the ``fields`` parameter), which fake-gcs-server ignores.

GCS answers a request naming ``fields`` with those fields only, and refuses a
selector it cannot parse with 400. fake-gcs-server 1.54 answers every field
whatever the selector says, so a selector that leaves out a field the adapter
reads would pass every test here and fail on GCS. The precondition proxy
(``gcs_proxy``) cuts each JSON answer down to its selector with ``select``.

The grammar (GCS's "partial response"): a comma-separated list of paths, a path
being names joined by ``/``, optionally followed by a parenthesised sub-list
that applies to each element under it; ``*`` names every field.
"""

import re
from typing import Any, cast

Selection = dict[str, "Selection"]
"""Each selected name and what is selected under it (empty: all of it)."""

_TOKEN = re.compile(r"[A-Za-z0-9_*]+|[(),/]")


class BadSelector(ValueError):
    """A ``fields`` value GCS would refuse ("Invalid field selection")."""


def parse(selector: str) -> Selection:
    """The selection ``selector`` names; ``BadSelector`` if it is not one."""
    tokens = _TOKEN.findall(selector)
    if "".join(tokens) != selector.replace(" ", "") or not tokens:
        raise BadSelector(selector)
    selection, end = _list(tokens, 0)
    if end != len(tokens):
        raise BadSelector(selector)
    return selection


def _list(tokens: list[str], at: int) -> tuple[Selection, int]:
    selection: Selection = {}
    while True:
        at = _item(tokens, at, selection)
        if at < len(tokens) and tokens[at] == ",":
            at += 1
            continue
        return selection, at


def _item(tokens: list[str], at: int, into: Selection) -> int:
    names = [_name(tokens, at)]
    at += 1
    while at < len(tokens) and tokens[at] == "/":
        names.append(_name(tokens, at + 1))
        at += 2
    inner: Selection = {}
    if at < len(tokens) and tokens[at] == "(":
        inner, at = _list(tokens, at + 1)
        if at >= len(tokens) or tokens[at] != ")":
            raise BadSelector("".join(tokens))
        at += 1
    for name in names[:-1]:
        into = into.setdefault(name, {})
    into[names[-1]] = _merged(into.get(names[-1]), inner)
    return at


def _name(tokens: list[str], at: int) -> str:
    if at >= len(tokens) or tokens[at] in "(),/":
        raise BadSelector("".join(tokens))
    return tokens[at]


def _merged(earlier: Selection | None, later: Selection) -> Selection:
    if earlier is None:
        return later
    if not earlier or not later:
        return {}  # one of them selects the whole field
    return earlier | later


def select(value: Any, selection: Selection) -> Any:
    """``value`` (a decoded JSON answer) with only what ``selection`` names."""
    if not selection:
        return value
    if isinstance(value, list):
        return [select(element, selection) for element in cast(list[Any], value)]
    if not isinstance(value, dict):
        return value
    whole = cast(dict[str, Any], value)
    chosen: dict[str, Any] = {}
    for name, inner in selection.items():
        for key in list(whole) if name == "*" else [name]:
            if key in whole:
                chosen[key] = select(whole[key], inner)
    return chosen
