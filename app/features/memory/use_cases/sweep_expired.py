from app.server.context import AppContext

from ..domain.expiry import Expiry
from ..domain.keys import entity_prefix_of_key
from ..policy.expiry import locate_sweep
from ..ports.expired_files import expired_files
from ..ports.request_records import sweep_tags
from ..schemas import SweepExpired, SweepReport, SweptFile


async def sweep_expired(request: SweepExpired, context: AppContext) -> SweepReport:
    """Erase every expired file of one entity, one scope or all, with its
    history, or list them on a dry run (the default).

    Each erase is guarded by the version listed: a file rewritten (or
    deleted) since is kept and counted. Every entity that lost a file has its
    index cache invalidated and the retry-key records naming an erased file
    erased, so none of a keyed write to it survives while a retry of a write
    to a file still there replays.
    Progress counts the files looked at (their number is not known ahead).
    """
    prefix = locate_sweep(request.scope, request.entity_id)
    storage = context.storage
    swept: list[SweptFile] = []
    kept = 0
    entities: dict[str, list[str]] = {}
    name = "sweep (dry run)" if request.dry_run else "sweep"
    try:
        with context.progress.bar(name, None) as bar:
            expiry = Expiry(context.clock)
            async for listed, named in expired_files(storage, prefix, expiry, bar):
                if request.dry_run:
                    swept.append(named)
                elif await storage.erase_if_version(listed.key, listed.version):
                    swept.append(named)
                    entity = entity_prefix_of_key(listed.key)
                    entities.setdefault(entity, []).append(listed.key)
                else:
                    kept += 1
    finally:
        for entity in sorted(entities):
            await context.index_cache.invalidate(entity)
    for entity, keys in sorted(entities.items()):
        await context.idempotency.erase_files(entity, sweep_tags(keys))
    return SweepReport(dry_run=request.dry_run, files=swept, kept=kept)
