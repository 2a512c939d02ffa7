from collections.abc import Sequence

from app.server.context import AppContext
from app.shared.errors import purge_incomplete_error
from app.shared.progress import ProgressBar

from ...audit.ports import Subject
from ..domain import split_key
from ..policy import locate_entity
from ..ports import ListedObject, Storage
from ..ports.storage_reads import list_batches
from ..schemas import FileName, PurgeMemory, PurgeReport

PURGE_MAX_PASSES = 5


async def purge_memory(request: PurgeMemory, context: AppContext) -> PurgeReport:
    """Delete every object under the entity prefix, or list them on a dry run.

    Each delete is guarded by the version just listed; an object a concurrent
    writer changed survives the pass and is retried on the next. Up to five
    passes run; anything left after the last is PURGE_INCOMPLETE. The index
    cache is invalidated even then. After a full purge the entity's
    retry-key records, webhooks and audit events are erased and storage is
    scrubbed.
    """
    storage = context.storage
    prefix = locate_entity(request.scope, request.entity_id)
    gone: list[ListedObject] = []
    passes = 0
    total = await storage.count(prefix)
    if request.dry_run:
        with context.progress.bar("purge (dry run)", total) as bar:
            gone = await _sweep(storage, prefix, bar, delete=False)
    else:
        try:
            with context.progress.bar("purge", total) as bar:
                while await storage.list_page(prefix, start_after=None, limit=1):
                    if passes == PURGE_MAX_PASSES:
                        remaining = await storage.count(prefix)
                        raise purge_incomplete_error(remaining, passes)
                    passes += 1
                    gone += await _sweep(storage, prefix, bar, delete=True)
        finally:
            await context.index_cache.invalidate(prefix)
        # The retry-key records and audit events name the erased files;
        # they go before the scrub, so it also wipes their freed pages (when
        # they share the database). The purge's own event comes after.
        await context.idempotency.erase_scope(prefix)
        await context.webhooks.erase(prefix)
        subject = Subject(request.scope, request.entity_id)
        await context.audit.erase(subject, at=context.clock())
        await storage.scrub(prefix)
    return PurgeReport(
        scope=request.scope,
        entity_id=request.entity_id,
        dry_run=request.dry_run,
        objects=len(gone),
        files=_file_names(gone),
        passes=passes,
    )


async def _sweep(
    storage: Storage, prefix: str, bar: ProgressBar, *, delete: bool
) -> list[ListedObject]:
    swept: list[ListedObject] = []
    async for batch in list_batches(storage, prefix):
        for listed in batch:
            if not delete or await storage.delete_if_version(
                listed.key, listed.version
            ):
                swept.append(listed)
                bar.advance()
    return swept


def _file_names(listed: Sequence[ListedObject]) -> list[FileName]:
    parts = (split_key(item.key) for item in listed)
    return [FileName(area=p[1], name=p[2]) for p in parts if p is not None]
