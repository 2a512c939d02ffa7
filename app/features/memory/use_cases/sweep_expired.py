from app.server.context import AppContext

from ..domain.expiry import Expiry
from ..domain.keys import entity_prefix_of_key
from ..policy.expiry import locate_sweep
from ..ports.expired_files import expired_files
from ..schemas import SweepExpired, SweepReport, SweptFile


async def sweep_expired(request: SweepExpired, context: AppContext) -> SweepReport:
    """Erase every expired file of one entity, one scope or all, with its
    history, or list them on a dry run (the default).

    Each erase is guarded by the version listed: a file rewritten (or
    deleted) since is kept and counted. Every entity that lost a file has its
    index cache invalidated and its retry-key records erased, as a
    purge does, so no record of a keyed write to an erased file survives.
    Progress counts the files looked at (their number is not known ahead).
    """
    prefix = locate_sweep(request.scope, request.entity_id)
    storage = context.storage
    swept: list[SweptFile] = []
    kept = 0
    entities: set[str] = set()
    name = "sweep (dry run)" if request.dry_run else "sweep"
    try:
        with context.progress.bar(name, None) as bar:
            expiry = Expiry(context.clock)
            async for listed, named in expired_files(storage, prefix, expiry, bar):
                if request.dry_run:
                    swept.append(named)
                elif await storage.erase_if_version(listed.key, listed.version):
                    swept.append(named)
                    entities.add(entity_prefix_of_key(listed.key))
                else:
                    kept += 1
    finally:
        for entity in sorted(entities):
            await context.index_cache.invalidate(entity)
    for entity in sorted(entities):
        await context.idempotency.erase_scope(entity)
    return SweepReport(dry_run=request.dry_run, files=swept, kept=kept)
