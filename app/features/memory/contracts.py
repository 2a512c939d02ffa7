from tenchi.contracts import contract
from tenchi.idempotency import IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS
from tenchi.responses import response

from app.shared.errors import (
    file_quota_exceeded,
    invalid_argument,
    memory_not_found,
    oversize_write,
    precondition_required,
    replace_fact_match,
    restricted_scope,
    version_conflict,
)

from .schemas import (
    AreaPath,
    CreateOrMatchHeaders,
    FileBody,
    FileListing,
    FilePath,
    FileVersion,
    IndexConditionHeaders,
    LineBody,
    ListQuery,
    MatchHeaders,
    MemoryFile,
    MemoryIndex,
    ReplaceBody,
    RestoreBody,
    ScopePath,
    SearchQuery,
    SearchResults,
    VersionHeaders,
    VersionListing,
    VersionPath,
)

FILE_PATH = "/files/{scope}/{area}/{name}"
MUTATION_ERRORS = (
    precondition_required,
    version_conflict,
    memory_not_found,
    restricted_scope,
    IDEMPOTENCY_CONFLICT,
    IDEMPOTENCY_IN_PROGRESS,
)

# The index is serialised once by its model and passed through: Tenchi's
# re-check of the emitted bytes costs ~130x the serialisation on a large index
# (bench/RESULTS.md), and the body is already built from the declared model.
memory_index = response(
    MemoryIndex,
    status=200,
    headers=VersionHeaders,
    passthrough=True,
    description="The index; its ETag names this whole index.",
)
index_not_modified = response(
    None,
    status=304,
    media_type=None,
    headers=VersionHeaders,
    description="The index named by If-None-Match is still current; no body.",
)

get_memory_index_contract = contract(
    method="GET",
    path="/index",
    headers=IndexConditionHeaders,
    responses=(memory_index, index_not_modified),
    name="get_memory_index",
    summary="The metadata index of every file the caller's grants reach.",
    tags=("memory",),
)

list_scope_contract = contract(
    method="GET",
    path="/files/{scope}",
    params=ScopePath,
    query=ListQuery,
    response=FileListing,
    errors=(invalid_argument,),
    name="list_scope",
    summary="One page of a whole scope, ascending by area and name.",
    tags=("memory",),
)

list_area_contract = contract(
    method="GET",
    path="/files/{scope}/{area}",
    params=AreaPath,
    query=ListQuery,
    response=FileListing,
    errors=(invalid_argument,),
    name="list_area",
    summary="One page of one area, ascending by name.",
    tags=("memory",),
)

read_file_contract = contract(
    method="GET",
    path=FILE_PATH,
    params=FilePath,
    response=MemoryFile,
    response_headers=VersionHeaders,
    errors=(invalid_argument, memory_not_found),
    name="read_file",
    summary="Read one file; its version is also the ETag.",
    tags=("memory",),
)

file_created = response(
    MemoryFile, status=201, headers=VersionHeaders, description="File created"
)
file_replaced = response(
    MemoryFile, status=200, headers=VersionHeaders, description="File replaced"
)

write_file_contract = contract(
    method="PUT",
    path=FILE_PATH,
    params=FilePath,
    request=FileBody,
    headers=CreateOrMatchHeaders,
    responses=(file_created, file_replaced),
    errors=(invalid_argument, oversize_write, file_quota_exceeded, *MUTATION_ERRORS),
    name="write_file",
    summary='Create (If-None-Match: *) or replace (If-Match: "<version>") a file.',
    tags=("memory",),
)

append_line_contract = contract(
    method="POST",
    path=f"{FILE_PATH}/lines",
    params=FilePath,
    request=LineBody,
    headers=MatchHeaders,
    response=MemoryFile,
    response_headers=VersionHeaders,
    errors=(invalid_argument, oversize_write, *MUTATION_ERRORS),
    name="append_line",
    summary="Append one fact line to an existing file.",
    tags=("memory",),
)

replace_fact_contract = contract(
    method="POST",
    path=f"{FILE_PATH}/replace",
    params=FilePath,
    request=ReplaceBody,
    headers=MatchHeaders,
    response=MemoryFile,
    response_headers=VersionHeaders,
    errors=(invalid_argument, oversize_write, replace_fact_match, *MUTATION_ERRORS),
    name="replace_fact",
    summary="Replace the one span of a file equal to old_string.",
    tags=("memory",),
)

list_versions_contract = contract(
    method="GET",
    path=f"{FILE_PATH}/versions",
    params=FilePath,
    query=ListQuery,
    response=VersionListing,
    errors=(invalid_argument, memory_not_found),
    name="list_versions",
    summary="One page of a file's version history, newest first (also once deleted).",
    tags=("memory",),
)

read_version_contract = contract(
    method="GET",
    path=f"{FILE_PATH}/versions/{{version}}",
    params=VersionPath,
    response=FileVersion,
    errors=(invalid_argument, memory_not_found),
    name="read_version",
    summary="One version record with the file as it stood after that change.",
    tags=("memory",),
)

restore_version_contract = contract(
    method="POST",
    path=f"{FILE_PATH}/restore",
    params=FilePath,
    request=RestoreBody,
    headers=CreateOrMatchHeaders,
    responses=(file_created, file_replaced),
    errors=(invalid_argument, oversize_write, file_quota_exceeded, *MUTATION_ERRORS),
    name="restore_version",
    summary=(
        'Write an earlier version again as a new one (If-Match: "<current>", or '
        "If-None-Match: * while the file is deleted)."
    ),
    tags=("memory",),
)

delete_file_contract = contract(
    method="DELETE",
    path=FILE_PATH,
    params=FilePath,
    headers=MatchHeaders,
    status=204,
    errors=(invalid_argument, *MUTATION_ERRORS),
    name="delete_file",
    summary="Delete a file at the version you read.",
    tags=("memory",),
)

search_memory_contract = contract(
    method="GET",
    path="/search",
    query=SearchQuery,
    response=SearchResults,
    errors=(invalid_argument,),
    name="search_memory",
    summary="Files of every granted scope that contain all the query's words.",
    tags=("memory",),
)
