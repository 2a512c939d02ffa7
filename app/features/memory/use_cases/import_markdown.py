"""import_markdown: a tree of markdown files read back into one entity."""

from functools import partial

from app.server.context import AppContext

from ..policy import locate_entity
from ..policy.markdown import tree_restore
from ..ports import Change
from ..ports.markdown_transfers import (
    checked_tree,
    import_report,
    import_tree,
    require_no_conflicts,
)
from ..schemas import ImportMarkdown, ImportMode, MarkdownImported


async def import_markdown(
    request: ImportMarkdown, context: AppContext
) -> MarkdownImported:
    """Restore the tree ``memory.export_markdown`` wrote, with the versions it names.

    A first pass reads and checks every file (nothing is written when one is
    invalid, or, in mode fail, when one exists with other content); a second
    writes each file whole, one at a time. A file storage holds exactly as the
    tree does is left alone, so a re-run writes only what is still missing.
    """
    prefix = locate_entity(request.scope, request.entity_id)
    tree, storage = context.markdown_trees(request.path, request.scope), context.storage
    now, overwrite = context.clock(), request.mode is ImportMode.OVERWRITE
    limit, source = context.limits.max_file_bytes, context.source
    check = partial(tree_restore, request, max_file_bytes=limit, source=source, now=now)
    with context.progress.bar("check_markdown", None) as bar:
        restores = checked_tree(tree, check)
        plan = await import_tree(storage, restores, None, bar, overwrite=overwrite)
    if request.mode is ImportMode.FAIL:
        require_no_conflicts(plan)
    if request.dry_run:
        return import_report(request, plan)
    change = Change("memory.import_markdown", context.source, now)
    try:
        with context.progress.bar("import_markdown", plan.total) as bar:
            restores = checked_tree(tree, check)
            done = await import_tree(
                storage, restores, change, bar, overwrite=overwrite
            )
    finally:
        await context.index_cache.invalidate(prefix)
    return import_report(request, done)
