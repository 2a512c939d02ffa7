"""Errors about a file or an argument the caller can correct and retry."""

from typing import Any

from tenchi.errors import AppError, ErrorDef

from ..locations import VERSION_RULE, Location
from .payload import etag, memory_error

version_conflict = ErrorDef(
    code="VERSION_CONFLICT",
    status=412,
    message="The file changed since it was read.",
    headers=("ETag",),
)


def _with_current(
    definition: ErrorDef,
    detail: str,
    location: Location,
    content: str,
    version: str,
    **extra: Any,
) -> AppError:
    """An error on the file at ``location`` carrying its current content and version."""
    return memory_error(
        definition, detail, location=location, content=content, version=version, **extra
    )


def version_conflict_error(location: Location, content: str, version: str) -> AppError:
    return _with_current(
        version_conflict,
        f"The file at {location.describe()} changed since it was read; the "
        "current content and version are attached; merge your change into "
        "the current content and retry with the current version.",
        location,
        content,
        version,
        headers={"ETag": etag(version)},
    )


oversize_write = ErrorDef(
    code="OVERSIZE_WRITE", status=413, message="The write is over the size limit."
)


def oversize_write_error(location: Location, size: int, limit: int) -> AppError:
    return memory_error(
        oversize_write,
        f"The write to {location.describe()} is {size} bytes, over the "
        f"{limit}-byte limit; shorten it or split the content across files.",
        location=location,
        size=size,
        limit=limit,
    )


file_quota_exceeded = ErrorDef(
    code="FILE_QUOTA_EXCEEDED", status=409, message="The entity is at its file cap."
)


def file_quota_exceeded_error(location: Location, limit: int) -> AppError:
    return memory_error(
        file_quota_exceeded,
        f"Creating {location.describe()} would exceed the {limit}-file limit "
        f"of scope {location.scope}; add to an existing file or delete one first.",
        location=location,
        limit=limit,
    )


replace_fact_match = ErrorDef(
    code="REPLACE_FACT_MATCH",
    status=409,
    message="old_string did not match exactly one span.",
)


def replace_fact_match_error(
    location: Location, content: str, version: str, match_count: int
) -> AppError:
    if match_count == 0:
        detail = (
            f"old_string matched 0 spans in {location.describe()}; widen or correct "
            "old_string using the attached current content so it matches."
        )
    else:
        detail = (
            f"old_string matched {match_count} spans in {location.describe()}; "
            "narrow old_string (include surrounding text) so it matches exactly "
            "one span."
        )
    return _with_current(
        replace_fact_match, detail, location, content, version, match_count=match_count
    )


invalid_argument = ErrorDef(
    code="INVALID_ARGUMENT", status=422, message="An argument is invalid."
)


def invalid_argument_error(argument: str, detail: str) -> AppError:
    sentence = f"Argument {argument} is invalid: {detail}"
    if not sentence.endswith((".", "!", "?")):
        sentence += "."
    return memory_error(invalid_argument, sentence, argument=argument)


def invalid_version_error(version: str) -> AppError:
    """A version no file can have: every surface refuses it with this payload."""
    return invalid_argument_error("version", f"{version!r} {VERSION_RULE}")


memory_not_found = ErrorDef(
    code="MEMORY_NOT_FOUND", status=404, message="No memory file exists there."
)


def _not_found(location: Location, reason: str, detail: str) -> AppError:
    return memory_error(memory_not_found, detail, location=location, reason=reason)


def memory_not_found_error(location: Location) -> AppError:
    return _not_found(
        location,
        "file_absent",
        f"No file exists at {location.describe()} yet; you may create it.",
    )


def version_absent_error(location: Location, version: str) -> AppError:
    """A version the file's history does not hold (never, or no longer)."""
    return _not_found(
        location,
        "version_absent",
        f"The history of {location.describe()} holds no version {version!r} "
        "(unknown, or pruned by retention); call list_versions for the versions "
        "it keeps.",
    )


def history_absent_error(location: Location) -> AppError:
    """No version record at all: the file never existed or its history is gone."""
    return _not_found(
        location,
        "file_absent",
        f"No file exists at {location.describe()} and no history of one is "
        "kept; check the scope, area and name against the index.",
    )


precondition_required = ErrorDef(
    code="PRECONDITION_REQUIRED",
    status=428,
    message="This mutation needs If-Match or If-None-Match.",
)


def precondition_required_error() -> AppError:
    return memory_error(
        precondition_required,
        'This mutation needs a precondition: send If-Match: "<version>" to '
        "change an existing file, or If-None-Match: * to create one.",
    )
