"""export_markdown: one entity's files as a tree of markdown files."""

from app.server.context import AppContext

from ..policy import locate_entity
from ..ports.markdown_transfers import export_tree
from ..schemas import ExportMarkdown, MarkdownExported


async def export_markdown(
    request: ExportMarkdown, context: AppContext
) -> MarkdownExported:
    """Write ``{path}/{scope}/{area}/{name}.md`` for every file of the entity.

    Storage is read one list batch at a time and each file written whole as it
    is read, so memory stays bounded; a file already holding the same bytes is
    not rewritten, so a re-run after an interruption continues where it stopped.
    """
    prefix = locate_entity(request.scope, request.entity_id)
    tree = context.markdown_trees(request.path, request.scope)
    total = await context.storage.count(prefix)
    with context.progress.bar("export_markdown", total) as bar:
        tally = await export_tree(context.storage, prefix, tree, bar)
    return MarkdownExported(
        scope=request.scope,
        entity_id=request.entity_id,
        path=request.path,
        files=tally["written"] + tally["unchanged"],
        written=tally["written"],
        unchanged=tally["unchanged"],
        unnamed=tally.names.get("unnamed", []),
    )
