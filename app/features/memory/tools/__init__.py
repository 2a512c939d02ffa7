"""The memory tools agents call over MCP: each declared and bound to its use case."""

from collections.abc import Sequence

from tenchi.errors import ErrorDef
from tenchi.tools import Tool, tool, tool_group, tool_handler

from app.shared.errors import (
    backend_unavailable,
    file_quota_exceeded,
    invalid_argument,
    memory_not_found,
    oversize_write,
    replace_fact_match,
    restricted_scope,
    unauthorized,
    version_conflict,
)

from ..schemas import (
    AppendLine,
    Deleted,
    DeleteFile,
    FileListing,
    FileVersion,
    GetMemoryIndex,
    ListPrefix,
    ListVersions,
    MemoryFile,
    MemoryIndex,
    ReadFile,
    ReadVersion,
    RenameFile,
    ReplaceFact,
    RestoreVersion,
    VersionListing,
    WriteFile,
)
from ..use_cases.append_line import append_line
from ..use_cases.delete_file import delete_file
from ..use_cases.get_memory_index import get_memory_index
from ..use_cases.list_prefix import list_prefix
from ..use_cases.list_versions import list_versions
from ..use_cases.read_file import read_file
from ..use_cases.read_version import read_version
from ..use_cases.rename_file import rename_file
from ..use_cases.replace_fact import replace_fact
from ..use_cases.restore_version import restore_version
from ..use_cases.write_file import write_file
from .descriptions import (
    APPEND_LINE_DESCRIPTION,
    DELETE_FILE_DESCRIPTION,
    GET_MEMORY_INDEX_DESCRIPTION,
    LIST_PREFIX_DESCRIPTION,
    LIST_VERSIONS_DESCRIPTION,
    READ_FILE_DESCRIPTION,
    READ_VERSION_DESCRIPTION,
    RENAME_FILE_DESCRIPTION,
    REPLACE_FACT_DESCRIPTION,
    RESTORE_VERSION_DESCRIPTION,
    WRITE_FILE_DESCRIPTION,
)

READ_ERRORS = (unauthorized, backend_unavailable, invalid_argument)
WRITE_ERRORS = (*READ_ERRORS, restricted_scope, memory_not_found, version_conflict)
HISTORY_READ_ERRORS = (*READ_ERRORS, memory_not_found)


def _memory_tool[RequestT, ResultT](
    name: str,
    request: type[RequestT],
    result: type[ResultT],
    description: str,
    errors: Sequence[ErrorDef],
    *,
    writes: bool = False,
    destructive: bool | None = None,
) -> Tool[RequestT, ResultT]:
    """A tool over memory alone; a write repeated is a second change, and is
    destructive unless it only adds."""
    return tool(
        name,
        request=request,
        result=result,
        description=description,
        errors=errors,
        read_only=not writes,
        destructive=destructive,
        idempotent=False if writes else None,
        open_world=False,
    )


get_memory_index_tool = tool(
    "get_memory_index",
    request=GetMemoryIndex,
    result=MemoryIndex,
    description=GET_MEMORY_INDEX_DESCRIPTION,
    errors=(unauthorized, backend_unavailable, restricted_scope),  # include_expired
    read_only=True,
    open_world=False,
)
read_file_tool = _memory_tool(
    "read_file",
    ReadFile,
    MemoryFile,
    READ_FILE_DESCRIPTION,
    (*READ_ERRORS, memory_not_found, restricted_scope),
)
list_prefix_tool = _memory_tool(
    "list_prefix",
    ListPrefix,
    FileListing,
    LIST_PREFIX_DESCRIPTION,
    (*READ_ERRORS, restricted_scope),  # include_expired is for owners only
)
write_file_tool = _memory_tool(
    "write_file",
    WriteFile,
    MemoryFile,
    WRITE_FILE_DESCRIPTION,
    (*WRITE_ERRORS, oversize_write, file_quota_exceeded),
    writes=True,
)
append_line_tool = _memory_tool(
    "append_line",
    AppendLine,
    MemoryFile,
    APPEND_LINE_DESCRIPTION,
    (*WRITE_ERRORS, oversize_write),
    writes=True,
    destructive=False,
)
replace_fact_tool = _memory_tool(
    "replace_fact",
    ReplaceFact,
    MemoryFile,
    REPLACE_FACT_DESCRIPTION,
    (*WRITE_ERRORS, oversize_write, replace_fact_match),
    writes=True,
)
delete_file_tool = _memory_tool(
    "delete_file",
    DeleteFile,
    Deleted,
    DELETE_FILE_DESCRIPTION,
    WRITE_ERRORS,
    writes=True,
)
rename_file_tool = _memory_tool(
    "rename_file",
    RenameFile,
    MemoryFile,
    RENAME_FILE_DESCRIPTION,
    WRITE_ERRORS,
    writes=True,
)
tools = tool_group(
    tool_handler(get_memory_index_tool, get_memory_index),
    tool_handler(read_file_tool, read_file),
    tool_handler(list_prefix_tool, list_prefix),
    tool_handler(write_file_tool, write_file),
    tool_handler(append_line_tool, append_line),
    tool_handler(replace_fact_tool, replace_fact),
    tool_handler(delete_file_tool, delete_file),
    tool_handler(rename_file_tool, rename_file),
)

# Version history (served unless WENCHANG_HISTORY_TOOLS=false).

list_versions_tool = _memory_tool(
    "list_versions",
    ListVersions,
    VersionListing,
    LIST_VERSIONS_DESCRIPTION,
    HISTORY_READ_ERRORS,
)
read_version_tool = _memory_tool(
    "read_version",
    ReadVersion,
    FileVersion,
    READ_VERSION_DESCRIPTION,
    HISTORY_READ_ERRORS,
)
restore_version_tool = _memory_tool(
    "restore_version",
    RestoreVersion,
    MemoryFile,
    RESTORE_VERSION_DESCRIPTION,
    (*WRITE_ERRORS, oversize_write, file_quota_exceeded),
    writes=True,
)

history_tools = tool_group(
    tool_handler(list_versions_tool, list_versions),
    tool_handler(read_version_tool, read_version),
    tool_handler(restore_version_tool, restore_version),
)
