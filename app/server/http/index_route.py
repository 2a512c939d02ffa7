"""The index route, whose large body is serialised once and passed through.

The contract declares the index a passthrough response (Tenchi's public way
to send a body it does not re-check): on a 500-entry index that check costs
~130x the serialisation (bench/RESULTS.md). The body is the ``MemoryIndex``
model's own serialisation, joined from the entries' JSON the budget was counted
in (``index_json``), so it builds no model. A caller holding the current ETag
gets a 304 that costs one marker read per granted entity and no listing.
Routes may not build Starlette responses, so the presenter lives in the
composition root.
"""

from pydantic import TypeAdapter
from starlette.responses import Response
from tenchi.responses import PresentedResponse, present
from tenchi.routes import route

from app.features.memory.contracts import (
    get_memory_index_contract,
    index_not_modified,
    memory_index,
)
from app.features.memory.domain import BuiltIndex
from app.features.memory.domain.index_answers import IndexAnswer
from app.features.memory.domain.index_tags import held_tags
from app.features.memory.routes.headers import tag_headers
from app.features.memory.schemas import (
    CappedArea,
    GetMemoryIndex,
    IndexConditionHeaders,
    ReadQuery,
)
from app.features.memory.use_cases.get_memory_index_if_changed import (
    get_memory_index_if_changed,
)
from app.server.auditing import audited, mark_audited
from app.server.context import AppContext

_CAPPED_JSON = TypeAdapter(list[CappedArea])


def index_json(built: BuiltIndex) -> bytes:
    """The ``MemoryIndex`` model's own JSON of ``built``, built from its rows'
    texts (``test_get_memory_index`` holds the bytes equal)."""
    entries = b",".join(built.texts)
    capped = _CAPPED_JSON.dump_json(built.capped)
    return b'{"entries":[%b],"capped":%b}' % (entries, capped)


def present_index(answer: IndexAnswer) -> PresentedResponse:
    if answer.built is None:
        return present(index_not_modified, headers=tag_headers(answer.tag))
    return present(
        memory_index,
        response=Response(
            index_json(answer.built),
            media_type="application/json",
            headers={"ETag": answer.tag},
        ),
    )


async def get_memory_index(
    query: ReadQuery, headers: IndexConditionHeaders, context: AppContext
) -> IndexAnswer:
    """The operation ``get_memory_index`` over HTTP, conditional and audited."""
    request = GetMemoryIndex(include_expired=query.include_expired)
    return await audited(
        context,
        "get_memory_index",
        None,
        lambda called: get_memory_index_if_changed(
            held_tags(headers.if_none_match), request, called
        ),
        mutates=False,
    )


index_route = route(
    get_memory_index_contract,
    mark_audited(get_memory_index, "get_memory_index"),
    present=present_index,
)
