"""The memory feature's HTTP contracts: one per operation, named like it."""

from collections.abc import Sequence
from functools import partial
from typing import Any

from pydantic import BaseModel
from tenchi.contracts import Contract, contract
from tenchi.errors import ErrorDef
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
    FilesQuery,
    FileVersion,
    IndexConditionHeaders,
    LineBody,
    ListQuery,
    MatchHeaders,
    MemoryFile,
    MemoryIndex,
    ReadQuery,
    RenameBody,
    ReplaceBody,
    RestoreBody,
    ScopePath,
    VersionHeaders,
    VersionListing,
    VersionPath,
)

FILE_PATH = "/files/{scope}/{area}/{name}"
TAGS = ("memory",)
FILE_READ_ERRORS = (invalid_argument, memory_not_found)
"""What a read of one file or of its history can refuse."""
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


def _read[T: BaseModel](
    path: str,
    response: type[T],
    *,
    params: type[BaseModel] | None = None,
    query: type[BaseModel] | None = None,
    response_headers: type[VersionHeaders] | None = None,
    errors: Sequence[ErrorDef] = (invalid_argument,),
    name: str,
    summary: str,
) -> Contract[T, Any]:
    """A GET answering one model; a file also answers its version as the ETag."""
    return contract(
        method="GET",
        path=path,
        params=params,
        query=query,
        response=response,
        response_headers=response_headers,
        errors=errors,
        name=name,
        summary=summary,
        tags=TAGS,
    )


_file_read = partial(_read, errors=FILE_READ_ERRORS)
"""A GET of one file or of its history: ``_read`` with a file read's errors."""


get_memory_index_contract = contract(
    method="GET",
    path="/index",
    query=ReadQuery,
    headers=IndexConditionHeaders,
    responses=(memory_index, index_not_modified),
    errors=(invalid_argument, restricted_scope),  # include_expired: owners only
    name="get_memory_index",
    summary="The metadata index of every file the caller's grants reach.",
    tags=TAGS,
)

list_scope_contract = _read(
    "/files/{scope}",
    FileListing,
    params=ScopePath,
    query=FilesQuery,
    errors=(invalid_argument, restricted_scope),
    name="list_scope",
    summary="One page of a whole scope, ascending by area and name.",
)

list_area_contract = _read(
    "/files/{scope}/{area}",
    FileListing,
    params=AreaPath,
    query=FilesQuery,
    errors=(invalid_argument, restricted_scope),
    name="list_area",
    summary="One page of one area, ascending by name.",
)

read_file_contract = _file_read(
    FILE_PATH,
    MemoryFile,
    params=FilePath,
    query=ReadQuery,
    response_headers=VersionHeaders,
    errors=(*FILE_READ_ERRORS, restricted_scope),  # include_expired: owners only
    name="read_file",
    summary="Read one file; its version is also the ETag.",
)

file_created = response(
    MemoryFile, status=201, headers=VersionHeaders, description="File created"
)
file_replaced = response(
    MemoryFile, status=200, headers=VersionHeaders, description="File replaced"
)


def _file_write(
    method: str, path: str, request: type[BaseModel], *, name: str, summary: str
) -> Contract[MemoryFile, VersionHeaders]:
    """Create (If-None-Match: *) or replace (If-Match) the file: 201 or 200."""
    return contract(
        method=method,
        path=path,
        params=FilePath,
        request=request,
        headers=CreateOrMatchHeaders,
        responses=(file_created, file_replaced),
        errors=(
            invalid_argument,
            oversize_write,
            file_quota_exceeded,
            *MUTATION_ERRORS,
        ),
        name=name,
        summary=summary,
        tags=TAGS,
    )


def _file_edit(
    action: str,
    request: type[BaseModel],
    errors: Sequence[ErrorDef],
    *,
    name: str,
    summary: str,
) -> Contract[MemoryFile, VersionHeaders]:
    """POST to the file's ``action``: an edit of the file at the version read."""
    return contract(
        method="POST",
        path=f"{FILE_PATH}/{action}",
        params=FilePath,
        request=request,
        headers=MatchHeaders,
        response=MemoryFile,
        response_headers=VersionHeaders,
        errors=(invalid_argument, oversize_write, *errors, *MUTATION_ERRORS),
        name=name,
        summary=summary,
        tags=TAGS,
    )


write_file_contract = _file_write(
    "PUT",
    FILE_PATH,
    FileBody,
    name="write_file",
    summary='Create (If-None-Match: *) or replace (If-Match: "<version>") a file.',
)

append_line_contract = _file_edit(
    "lines",
    LineBody,
    (),
    name="append_line",
    summary="Append one fact line to an existing file.",
)

replace_fact_contract = _file_edit(
    "replace",
    ReplaceBody,
    (replace_fact_match,),
    name="replace_fact",
    summary="Replace the one span of a file equal to old_string.",
)

list_versions_contract = _file_read(
    f"{FILE_PATH}/versions",
    VersionListing,
    params=FilePath,
    query=ListQuery,
    name="list_versions",
    summary="One page of a file's version history, newest first (also once deleted).",
)

read_version_contract = _file_read(
    f"{FILE_PATH}/versions/{{version}}",
    FileVersion,
    params=VersionPath,
    name="read_version",
    summary="One version record with the file as it stood after that change.",
)

restore_version_contract = _file_write(
    "POST",
    f"{FILE_PATH}/restore",
    RestoreBody,
    name="restore_version",
    summary=(
        'Write an earlier version again as a new one (If-Match: "<current>", or '
        "If-None-Match: * while the file is deleted)."
    ),
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
    tags=TAGS,
)

rename_file_contract = contract(
    method="POST",
    path=f"{FILE_PATH}/rename",
    params=FilePath,
    request=RenameBody,
    headers=MatchHeaders,
    response=MemoryFile,
    response_headers=VersionHeaders,
    errors=(invalid_argument, *MUTATION_ERRORS),
    name="rename_file",
    summary=(
        "Move a file, with its history, to another area or name in its scope "
        '(If-Match: "<version>"); an existing file there is a 412.'
    ),
    tags=TAGS,
)
