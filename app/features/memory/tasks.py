from tenchi.tasks import task, task_group

from .use_cases.export_markdown import export_markdown
from .use_cases.export_memory import export_memory
from .use_cases.import_basic_memory import import_basic_memory
from .use_cases.import_markdown import import_markdown
from .use_cases.import_mcp_memory import import_mcp_memory
from .use_cases.import_memory import import_memory
from .use_cases.invalidate_index import invalidate_index
from .use_cases.purge_memory import purge_memory
from .use_cases.sweep_expired import sweep_expired

export_task = task(
    "memory.export",
    export_memory,
    description=(
        "Export every file of one entity in one scope: content, description, "
        "aliases, sources, last_updated and version, in key order. The output "
        "is the input of memory.import. include_history adds each file's "
        "version records (newest first), which memory.import replays."
    ),
)
import_task = task(
    "memory.import",
    import_memory,
    description=(
        "Restore files into one entity exactly as given (content and metadata; "
        "new versions). mode fail (default) writes nothing if any file exists, "
        "skip keeps existing files, overwrite replaces them. Seeds system/ and "
        "moves data between backends. A file's history, when given, is "
        "replayed (oldest first) before the file it leads to is created."
    ),
)
import_mcp_memory_task = task(
    "memory.import_mcp_memory",
    import_mcp_memory,
    description=(
        "Import the MCP reference memory server's memory.json (JSON Lines of "
        "entities and relations) at path: one file per entity in area "
        "(default knowledge), observations as '- [stated]' fact lines, outgoing "
        "relations under '## Relations', the entity type as description. Every "
        "line is checked first (a bad one is named, nothing written); files "
        "already holding the same content are left alone, so a re-run changes "
        "nothing. mode fail (default) writes nothing if a file holds other "
        "content, skip keeps it, overwrite replaces it; dry_run only reports."
    ),
)
import_basic_memory_task = task(
    "memory.import_basic_memory",
    import_basic_memory,
    description=(
        "Import basic-memory markdown notes at path (a .md file, or a folder "
        "read recursively): one file per note in area (default notes), named by "
        "its title; front matter becomes the description and aliases "
        "(permalink, tags), observations '- [category] text' become fact lines, "
        "the rest of the body is kept. Checked first, idempotent, mode and "
        "dry_run as for memory.import_mcp_memory."
    ),
)
purge_task = task(
    "memory.purge",
    purge_memory,
    description=(
        "Erase every object of one entity in one scope. dry_run (default true) "
        "only reports what would go; otherwise deletes with version guards over "
        "up to 5 passes, fails with PURGE_INCOMPLETE if anything remains, "
        "invalidates the index cache and scrubs storage."
    ),
)
export_markdown_task = task(
    "memory.export_markdown",
    export_markdown,
    description=(
        "Write every file of one entity in one scope as {path}/{scope}/{area}/"
        "{name}.md: YAML front matter (description, aliases, sources, "
        "last_updated, expires_at, version) between --- lines, then the content "
        "exactly. Files already holding the same bytes are not rewritten."
    ),
)
import_markdown_task = task(
    "memory.import_markdown",
    import_markdown,
    description=(
        "Read a tree memory.export_markdown wrote back into one entity, keeping "
        "the versions it names where storage can. Every file is checked before "
        "any is written; mode as for memory.import; files storage already holds "
        "exactly are left alone; dry_run only reports."
    ),
)
invalidate_index_task = task(
    "memory.invalidate_index",
    invalidate_index,
    description=(
        "Drop the cached index listing of one entity in one scope, so the next "
        "get_memory_index lists storage again."
    ),
)

sweep_expired_task = task(
    "memory.sweep_expired",
    sweep_expired,
    description=(
        "Erase expired files with their history: of one entity (scope and "
        "entity_id), one scope, or every entity when none is named. dry_run "
        "(default true) only reports what would go. Each erase is guarded by "
        "the version listed (a file rewritten since is kept and counted); the "
        "index cache and Idempotency-Key records of each entity that lost a "
        "file are erased. Safe to run again."
    ),
)

tasks = task_group(
    export_task,
    import_task,
    import_mcp_memory_task,
    import_basic_memory_task,
    purge_task,
    invalidate_index_task,
    export_markdown_task,
    import_markdown_task,
    sweep_expired_task,
)
