"""The agent tools of version history: list_versions, read_version, restore_version."""

from tenchi.tools import tool, tool_group, tool_handler

from app.shared.errors import (
    backend_unavailable,
    file_quota_exceeded,
    invalid_argument,
    memory_not_found,
    oversize_write,
    restricted_scope,
    unauthorized,
    version_conflict,
)

from .schemas import (
    FileVersion,
    ListVersions,
    MemoryFile,
    ReadVersion,
    RestoreVersion,
    VersionListing,
)
from .use_cases.list_versions import list_versions
from .use_cases.read_version import read_version
from .use_cases.restore_version import restore_version

# Agent-facing text; the first line names the job and contains "memory" once.

LIST_VERSIONS_DESCRIPTION = """\
List the saved versions of one memory file, newest first, without content.

Use it when the user asks what a file said before, who changed it or when, or
to undo a change: after a wrong write, replace or delete, the earlier text is
still here. Each entry has `version`, `operation` (write_file, append_line,
replace_fact, delete_file, restore_version, memory.import), `actor` (which
client wrote it), `at`, `size`, and `deleted` (true for the record a delete
left). A deleted file's history stays listed. Pass `next_cursor` back as
`cursor` for older entries. Old versions are pruned after a while.
NotFoundError (file_absent): no such file and no history of one."""

READ_VERSION_DESCRIPTION = """\
Read one saved version of a memory file: the record and the file as it stood.

Take `version` from list_versions. The result has the record's fields and
`file`, the whole file object of that version (a delete's record has empty
content). Reading changes nothing. NotFoundError (version_absent): that
version is unknown or was pruned; call list_versions again."""

RESTORE_VERSION_DESCRIPTION = """\
Bring back an earlier version of a memory file as a new version.

Use it to undo a mistaken write_file, replace_fact, append_line or delete_file
when the user wants the earlier text back. It writes that version's content,
description and aliases as a new version; nothing in the history is removed.
It is just another version-guarded write: pass the file's current version as
`expected_version` (read_file or the index gives it), or null when the file is
deleted now (this re-creates it).

Errors:
- VersionConflictError is routine: the file changed since you read it (or
  exists although you passed null). Check its `content`; retry with its
  `version` only if the restore is still wanted.
- NotFoundError (version_absent): no such version; call list_versions.
- InvalidArgumentError (version): that record is a delete and has no content;
  pick the version listed just before it.
- RestrictedScopeError is permanent: `system` is read-only."""

READ_ERRORS = (unauthorized, backend_unavailable, invalid_argument, memory_not_found)

list_versions_tool = tool(
    "list_versions",
    request=ListVersions,
    result=VersionListing,
    description=LIST_VERSIONS_DESCRIPTION,
    errors=READ_ERRORS,
    read_only=True,
    open_world=False,
)

read_version_tool = tool(
    "read_version",
    request=ReadVersion,
    result=FileVersion,
    description=READ_VERSION_DESCRIPTION,
    errors=READ_ERRORS,
    read_only=True,
    open_world=False,
)

restore_version_tool = tool(
    "restore_version",
    request=RestoreVersion,
    result=MemoryFile,
    description=RESTORE_VERSION_DESCRIPTION,
    errors=(
        *READ_ERRORS,
        restricted_scope,
        version_conflict,
        oversize_write,
        file_quota_exceeded,
    ),
    destructive=True,
    idempotent=False,
    open_world=False,
)

history_tools = tool_group(
    tool_handler(list_versions_tool, list_versions),
    tool_handler(read_version_tool, read_version),
    tool_handler(restore_version_tool, restore_version),
)
