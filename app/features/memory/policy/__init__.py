"""Who may touch which memory, and where a file may be: grants, paths, roles."""

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

from tenchi.errors import AppError

from app.shared.errors import (
    invalid_argument_error,
    role_required_error,
    system_read_only_error,
)
from app.shared.identity import Grant, Identity
from app.shared.locations import SEGMENT_RULE, Location, is_valid_segment

from ..domain import (
    SYSTEM_AREA,
    Address,
    address_of,
    decode_cursor,
    entity_prefix,
)
from ..ports import VersionRecord

READ_ONLY_ROLE = "reader"
WRITER_ROLES = frozenset({"owner", "admin", "member"})
"""What a reader is told may write a scope that no write role restricts."""
AREA_SLUG = re.compile(r"[a-z0-9][a-z0-9_-]*")
PLAIN_NAME = re.compile(r"(?!\.\.?\Z)[ -.0-\[\]-~]+")
"""A name every check of a name accepts: printable ASCII without '/' or '\\',
not '.' or '..'."""


@dataclass(frozen=True, slots=True)
class ScopePolicy:
    """Scope name -> roles allowed to write it; an absent scope is unrestricted."""

    write_roles: Mapping[str, frozenset[str]] = field(
        default_factory=dict[str, frozenset[str]]
    )


def require_text(argument: str, value: str) -> str:
    require_utf8(argument, value)
    return value


def require_utf8(argument: str, value: str) -> bytes:
    """``value`` as UTF-8; text that has none (a lone surrogate) is refused."""
    try:
        return value.encode()
    except UnicodeEncodeError:
        raise invalid_argument_error(
            argument, f"{argument} is not valid UTF-8 text"
        ) from None


def require_grant(identity: Identity, scope: str) -> Grant:
    require_text("scope", scope)
    grant = identity.grants.get(scope)
    if grant is None:
        available = ", ".join(sorted(identity.grants)) or "none"
        raise invalid_argument_error(
            "scope",
            f"scope '{scope}' is not available in this session; "
            f"available scopes: {available}",
        )
    return grant


def _invalid_area(area: str) -> AppError:
    return invalid_argument_error(
        "area",
        f"area {area!r} must be a lowercase slug: a-z0-9 first, then a-z0-9, "
        "'-' or '_'",
    )


def _invalid_name(name: str) -> AppError:
    return invalid_argument_error(
        "name",
        f"name {name!r} {SEGMENT_RULE}",
    )


def require_path(area: str, name: str) -> None:
    """Area and name are storage-key segments; area is reported first."""
    if not is_valid_segment(area):
        raise _invalid_area(area)
    if not is_valid_segment(name):
        raise _invalid_name(name)


def require_area(area: str) -> str:
    require_text("area", area)
    # A slug is always a valid key segment, so this is the whole area rule.
    if not AREA_SLUG.fullmatch(area):
        raise _invalid_area(area)
    return area


def is_forbidden_name_char(char: str) -> bool:
    point = ord(char)
    if 0xFDD0 <= point <= 0xFDEF or point & 0xFFFE == 0xFFFE:
        return True
    return unicodedata.category(char) in ("Cf", "Zl", "Zp", "Cs")


def require_name(name: str) -> str:
    require_text("name", name)
    if name.isascii():
        return name  # no ASCII character is invisible, a separator or a noncharacter
    # The path step has already rejected separators, controls and dot names.
    for char in name:
        if is_forbidden_name_char(char):
            raise invalid_argument_error(
                "name",
                "name must not contain invisible, separator, or noncharacter "
                f"U+{ord(char):04X}",
            )
    return name


def locate_file(identity: Identity, scope: str, area: str, name: str) -> Address:
    """Check order: grant -> path (area, then name) -> area slug -> name characters."""
    grant = require_grant(identity, scope)
    # A slug area and a plain name pass every check (nearly every call, in two
    # regex matches); any other path takes the checks in order, for its error.
    if not (AREA_SLUG.fullmatch(area) and PLAIN_NAME.fullmatch(name)):
        require_path(area, name)
        require_area(area)
        require_name(name)
    return address_of(Location(scope, area, name), grant.entity_id)


def locate_entity(scope: str, entity_id: str) -> str:
    """The prefix of an entity an operator names directly (tasks carry no grants)."""
    for argument, value in (("scope", scope), ("entity_id", entity_id)):
        if not is_valid_segment(value):
            raise invalid_argument_error(
                argument,
                f"{argument} {value!r} {SEGMENT_RULE}",
            )
    return entity_prefix(scope, entity_id)


def require_restorable(record: VersionRecord, version: str) -> bytes:
    """The content of a version that has some (a delete's record has none)."""
    if record.deleted or record.data is None:
        raise invalid_argument_error(
            "version",
            f"version {version} is the record of a delete and has no content; "
            "restore a version listed before it",
        )
    return record.data


LISTING_CURSOR_HINT = (
    "cursor was not issued for this listing; pass the next_cursor "
    "returned with the same scope and area, or omit it to start over"
)

VERSIONS_CURSOR_HINT = (
    "cursor was not issued for this file's versions; pass the "
    "next_cursor returned for the same file, or omit it to start over"
)


def require_issued_cursor(
    key: bytes, listing: str, cursor: str, *, hint: str = LISTING_CURSOR_HINT
) -> str:
    """The position of a cursor this listing issued; any other is INVALID_ARGUMENT."""
    position = decode_cursor(key, listing, cursor)
    if position is None:
        raise invalid_argument_error("cursor", hint)
    return position


def locate_prefix(identity: Identity, scope: str, area: str | None) -> str:
    grant = require_grant(identity, scope)
    prefix = entity_prefix(scope, grant.entity_id)
    if area is None:
        return prefix
    return f"{prefix}{require_area(area)}/"


def require_writable(identity: Identity, policy: ScopePolicy, address: Address) -> None:
    location = address.location
    if location.area == SYSTEM_AREA:
        raise system_read_only_error(location)
    roles = policy.write_roles.get(location.scope)
    role = identity.grants[location.scope].role
    if role == READ_ONLY_ROLE:
        # A reader never writes, whatever the scope allows (an OAuth client
        # granted read-only access holds its grants as readers).
        raise role_required_error(location, (roles or WRITER_ROLES) - {role})
    if roles is not None and role not in roles:
        raise role_required_error(location, roles)


def granted_prefixes(identity: Identity) -> list[str]:
    """The entity prefixes an index may read: exactly the caller's grants."""
    return [
        entity_prefix(scope, grant.entity_id)
        for scope, grant in identity.grants.items()
    ]
