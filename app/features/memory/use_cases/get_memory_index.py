from collections.abc import Iterable

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import BuiltIndex, build_index
from ..policy import granted_prefixes
from ..policy.expiry import hidden_after
from ..ports import ListedObject
from ..ports.index_reads import cached_listings, live_files
from ..schemas import GetMemoryIndex, MemoryIndex


async def get_memory_index(request: GetMemoryIndex, context: AppContext) -> MemoryIndex:
    """Metadata of every file the caller's grants reach, ordered and budgeted;
    expired files only when an owner of every granted scope asks for them."""
    return (await built_memory_index(request, context)).index


async def built_memory_index(
    request: GetMemoryIndex, context: AppContext
) -> BuiltIndex:
    """``get_memory_index`` as plain rows and JSON text, no model built."""
    identity = require_identity(context.identity)
    hide = hidden_after(identity, None, request.include_expired, context.clock)
    prefixes = granted_prefixes(identity)
    cache = context.index_cache
    cached = await cached_listings(cache, prefixes)
    entities = zip(prefixes, cached, strict=True)
    return index_of(context, await live_files(context.storage, cache, entities, hide))


def index_of(context: AppContext, live: Iterable[ListedObject]) -> BuiltIndex:
    limits = context.limits
    return build_index(
        live, priority=limits.scope_priority, max_bytes=limits.index_max_bytes
    )
