"""The index route, whose large body is serialised once and passed through.

Tenchi re-checks every JSON body it emits against the published schema; on a
500-entry index that check costs ~130x the serialisation (bench/RESULTS.md).
The body here is the declared ``MemoryIndex`` model's own serialisation, so the
re-check can prove nothing new. Routes may not build Starlette responses, so the
presenter lives in the composition root.
"""

from starlette.responses import Response
from tenchi.responses import PresentedResponse, present
from tenchi.routes import route

from app.features.memory.contracts import get_memory_index_contract, memory_index
from app.features.memory.schemas import MemoryIndex
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.server.auditing import audited_use_case


def present_index(index: MemoryIndex) -> PresentedResponse:
    body = index.__pydantic_serializer__.to_json(index)
    return present(memory_index, response=Response(body, media_type="application/json"))


index_route = route(
    get_memory_index_contract,
    audited_use_case("get_memory_index", get_memory_index, mutates=False),
    present=present_index,
)
