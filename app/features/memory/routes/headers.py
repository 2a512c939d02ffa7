"""HTTP headers of the memory operations: preconditions in, ETag and status out."""

from tenchi.responses import PresentedResponse, present

from app.shared.errors import (
    etag,
    invalid_argument_error,
    precondition_required_error,
)

from ..contracts import file_created, file_replaced
from ..schemas import (
    CreateOrMatchHeaders,
    MatchHeaders,
    MemoryFile,
    RestoreVersion,
    VersionHeaders,
    WriteFile,
)


def version_headers(file: MemoryFile) -> VersionHeaders:
    return tag_headers(etag(file.version))


def tag_headers(tag: str) -> VersionHeaders:
    """The ETag header of an answer whose entity tag is ``tag`` (quoted)."""
    return VersionHeaders(ETag=tag)


def present_write(
    request: WriteFile | RestoreVersion, file: MemoryFile
) -> PresentedResponse:
    """201 to a create (no expected_version), 200 to a replace; both carry the ETag.

    A restore answers the same way: 201 when it re-creates a deleted file.
    """
    definition = file_created if request.expected_version is None else file_replaced
    return present(definition, file, headers=version_headers(file))


def _version_of(if_match: str) -> str:
    return if_match[1:-1]


def expected_from_if_match(if_match: str | None, if_none_match: str | None) -> str:
    """The version a POST or DELETE is guarded by; If-None-Match has no meaning here."""
    if if_none_match is not None:
        raise invalid_argument_error(
            "expected_version",
            "If-None-Match applies only to creating a file with PUT; send If-Match: "
            '"<version>" instead',
        )
    if if_match is None:
        raise precondition_required_error()
    return _version_of(if_match)


def expected_from_put(if_match: str | None, if_none_match: str | None) -> str | None:
    """None to create (If-None-Match: *), else the version a replace is guarded by."""
    if if_match is not None and if_none_match is not None:
        raise invalid_argument_error(
            "expected_version",
            'send either If-None-Match: * (create) or If-Match: "<version>" '
            "(replace), not both",
        )
    if if_match is not None:
        return _version_of(if_match)
    if if_none_match is None:
        raise precondition_required_error()
    return None


def expected_version(headers: MatchHeaders | CreateOrMatchHeaders) -> str | None:
    """The operation's ``expected_version``: only PUT's headers may create."""
    if isinstance(headers, CreateOrMatchHeaders):
        return expected_from_put(headers.if_match, headers.if_none_match)
    return expected_from_if_match(headers.if_match, headers.if_none_match)
