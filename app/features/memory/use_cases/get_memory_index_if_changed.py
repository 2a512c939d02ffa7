from collections.abc import Collection

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.index_answers import IndexAnswer
from ..domain.index_tags import ANY_TAG, index_tag
from ..policy import granted_prefixes
from ..policy.expiry import hidden_after
from ..ports.index_reads import cached_listings, expiry_moments, live_files
from ..schemas import GetMemoryIndex
from .get_memory_index import index_of


async def get_memory_index_if_changed(
    held: Collection[str], request: GetMemoryIndex, context: AppContext
) -> IndexAnswer:
    """The caller's index and its tag, or only the tag when ``held`` names it.

    The tag is taken from the markers read before the listings, so a write
    landing meanwhile leaves the tag older than the body: the next
    revalidation then fetches again instead of keeping a stale index. It also
    carries the earliest pending expiry: one file expiring moves it with no
    write at all, and a revalidation reads no listing to know it. An owner's
    view with expired files has tags of its own, never the default view's, so
    neither is answered 304 for the other.
    """
    identity = require_identity(context.identity)
    hide = hidden_after(identity, None, request.include_expired, context.clock)
    prefixes = granted_prefixes(identity)
    storage, cache = context.storage, context.index_cache
    cached = await cached_listings(cache, prefixes)
    entities = list(zip(prefixes, cached, strict=True))
    next_expiry = None
    if hide is not None:  # nothing expires from the owner's view of expired files
        entities, moments = await expiry_moments(storage, cache, entities)
        next_expiry = hide.next_after_now(moments)
    limits = context.limits
    tag = index_tag(
        [(prefix, entry.stamp) for prefix, entry in entities],
        priority=limits.scope_priority,
        max_bytes=limits.index_max_bytes,
        next_expiry=next_expiry,
        with_expired=hide is None,
    )
    if tag in held or ANY_TAG in held:
        return IndexAnswer(tag, None)
    live = await live_files(storage, cache, entities, hide)
    return IndexAnswer(tag, index_of(context, live))
