"""The index tool's direct answer: the index the HTTP route serves, no model built.

Through Tenchi's runner the tool's result is a ``MemoryIndex`` of one model per
entry, dumped, then written again with ``json.dumps(sort_keys=True)``: together
several times the cost of building the index. ``mcp_direct`` answers a plain
call from the ``BuiltIndex`` instead: its JSON is the model's own serialisation
(``index_route.index_json``), so parsing it gives the model's JSON-mode dump; the text
is written from its rows, keys sorted; and the files it served were counted
while it was built, so the audit walks no entries. ``tests/test_mcp_direct.py``
holds the answers and the audit trail equal to the SDK's path.
"""

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pydantic_core import PydanticSerializationError, to_json

from app.features.memory.domain import BuiltIndex
from app.features.memory.domain.views import EntryRow
from app.server.context import AppContext
from app.server.http.index_route import index_json

_ENTRY_KEYS = sorted(EntryRow.__annotations__)


@dataclass(frozen=True, slots=True)
class DirectAnswer:
    """A tool's JSON-mode result and its text as ``json.dumps`` writes it sorted."""

    result: object
    text: str


DirectResult = Callable[[AppContext, dict[str, object]], Awaitable[DirectAnswer]]
"""A tool's answer to its use case's keyword arguments (its parsed request),
from the use case run as its served binding runs it."""


def index_result(
    use_case: Callable[..., Awaitable[BuiltIndex]],
) -> DirectResult:
    """The index tool's answer from ``use_case`` (audited as the tool is)."""

    async def result(context: AppContext, kwargs: dict[str, object]) -> DirectAnswer:
        built = await use_case(**kwargs, context=context)
        dump: object = json.loads(index_json(built))
        return DirectAnswer(dump, _sorted_text(built) or _dumped(dump))

    return result


def _sorted_text(built: BuiltIndex) -> str | None:
    """``json.dumps(dump, sort_keys=True, separators=(",", ":"))`` of the index.

    pydantic-core escapes as ``json.dumps`` does with ``ensure_ascii`` except
    for DEL (which ``json`` escapes) and lone surrogates (which it cannot
    encode): for those, None (``json.dumps`` writes the text).
    """
    try:
        entries = to_json(
            # expires_at is in a row only when its file expires.
            [
                {key: row[key] for key in _ENTRY_KEYS if key in row}
                for row in built.rows
            ],
            ensure_ascii=True,
        )
        capped = to_json(
            [
                dict(sorted(area.model_dump(mode="json").items()))
                for area in built.capped
            ],
            ensure_ascii=True,
        )
    except PydanticSerializationError:
        return None
    if b"\x7f" in entries or b"\x7f" in capped:
        return None
    return (b'{"capped":%b,"entries":%b}' % (capped, entries)).decode()


def _dumped(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
