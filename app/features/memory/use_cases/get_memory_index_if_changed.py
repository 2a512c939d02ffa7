from collections.abc import Collection

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.index_answers import IndexAnswer
from ..domain.index_tags import ANY_TAG, index_tag
from ..policy import granted_prefixes
from ..policy.expiry import hidden_after
from ..schemas import GetMemoryIndex
from .get_memory_index import cached_listings, index_of, live_files


async def get_memory_index_if_changed(
    held: Collection[str], request: GetMemoryIndex, context: AppContext
) -> IndexAnswer:
    """The caller's index and its tag, or only the tag when ``held`` names it.

    The tag is taken from the markers read before the listings, so a write
    landing meanwhile leaves the tag older than the body: the next
    revalidation then fetches again instead of keeping a stale index. It also
    counts the expired files: one expiring moves it with no write at all. An
    owner's view with expired files has tags of its own, never the default
    view's, so neither is answered 304 for the other.
    """
    identity = require_identity(context.identity)
    hide = hidden_after(identity, None, request.include_expired, context.clock)
    prefixes = granted_prefixes(identity)
    cached = await cached_listings(context, prefixes)
    entities = zip(prefixes, cached, strict=True)
    live, expired = await live_files(context, entities, hide)
    limits = context.limits
    tag = index_tag(
        [(prefix, entry.stamp) for prefix, entry in zip(prefixes, cached, strict=True)],
        priority=limits.scope_priority,
        max_bytes=limits.index_max_bytes,
        expired=expired,
        with_expired=hide is None,
    )
    if tag in held or ANY_TAG in held:
        return IndexAnswer(tag, None)
    return IndexAnswer(tag, index_of(context, live))
