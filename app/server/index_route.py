"""The index route, whose large body is serialised once and passed through.

Tenchi re-checks every JSON body it emits against the published schema; on a
500-entry index that check costs ~130x the serialisation (bench/RESULTS.md).
The body here is the declared ``MemoryIndex`` model's own serialisation, so the
re-check can prove nothing new. A caller holding the current ETag gets a 304
that costs one marker read per granted entity and no listing. Routes may not
build Starlette responses, so the presenter lives in the composition root.
"""

from starlette.responses import Response
from tenchi.responses import PresentedResponse, present
from tenchi.routes import route

from app.features.memory.contracts import (
    get_memory_index_contract,
    index_not_modified,
    memory_index,
)
from app.features.memory.domain.index_tags import held_tags
from app.features.memory.routes.headers import tag_headers
from app.features.memory.schemas import IndexConditionHeaders
from app.features.memory.use_cases.get_memory_index_if_changed import (
    IndexAnswer,
    get_memory_index_if_changed,
)
from app.server.auditing import audited, mark_audited
from app.server.context import AppContext


def present_index(answer: IndexAnswer) -> PresentedResponse:
    if answer.built is None:
        return present(index_not_modified, headers=tag_headers(answer.tag))
    return present(
        memory_index,
        response=Response(
            answer.built.json,
            media_type="application/json",
            headers={"ETag": answer.tag},
        ),
    )


async def get_memory_index(
    headers: IndexConditionHeaders, context: AppContext
) -> IndexAnswer:
    """The operation ``get_memory_index`` over HTTP, conditional and audited."""
    return await audited(
        context,
        "get_memory_index",
        None,
        lambda called: get_memory_index_if_changed(
            held_tags(headers.if_none_match), called
        ),
        mutates=False,
    )


index_route = route(
    get_memory_index_contract,
    mark_audited(get_memory_index, "get_memory_index"),
    present=present_index,
)
