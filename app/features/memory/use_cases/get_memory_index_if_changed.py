from collections.abc import Collection

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.index_answers import IndexAnswer
from ..domain.index_tags import ANY_TAG, index_tag
from ..policy import granted_prefixes
from .get_memory_index import cached_listings, index_of, live_files


async def get_memory_index_if_changed(
    held: Collection[str], context: AppContext
) -> IndexAnswer:
    """The caller's index and its tag, or only the tag when ``held`` names it.

    The tag is taken from the markers read before the listings, so a write
    landing meanwhile leaves the tag older than the body: the next
    revalidation then fetches again instead of keeping a stale index. It also
    counts the expired files: one expiring moves it with no write at all.
    """
    identity = require_identity(context.identity)
    prefixes = granted_prefixes(identity)
    cached = await cached_listings(context, prefixes)
    live, expired = await live_files(context, zip(prefixes, cached, strict=True))
    limits = context.limits
    tag = index_tag(
        [(prefix, entry.stamp) for prefix, entry in zip(prefixes, cached, strict=True)],
        priority=limits.scope_priority,
        max_bytes=limits.index_max_bytes,
        expired=expired,
    )
    if tag in held or ANY_TAG in held:
        return IndexAnswer(tag, None)
    return IndexAnswer(tag, index_of(context, live))
