"""Who a caller is: grants of scopes to entities, and the resolver port.

An identity is a set of grants, each mapping a scope name to the entity the
caller acts for in that scope and the caller's role there. Entity ids come only
from here, never from a caller's arguments.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from .errors import resolver_failure_error
from .locations import is_valid_segment


@dataclass(frozen=True, slots=True)
class Grant:
    entity_id: str
    role: str


@dataclass(frozen=True, slots=True)
class Identity:
    grants: Mapping[str, Grant]
    label: str | None = None
    token_id: str | None = None
    """The token's public id (``wenchang token list``); None without a token."""


@dataclass(frozen=True, slots=True)
class ResolutionFailure:
    detail: str = field(default="")


class Resolver(Protocol):
    def resolve(self, credentials: str) -> Identity | ResolutionFailure:
        """Resolve a bearer credential; never raises for a bad credential."""
        ...


def require_identity(identity: Identity | None) -> Identity:
    if identity is None:
        raise resolver_failure_error()
    return identity


def parse_grant(text: str) -> tuple[str, Grant]:
    """Parse ``SCOPE=ENTITY:ROLE``; raises ValueError naming what to fix."""
    scope, equals, rest = text.partition("=")
    entity_id, colon, role = rest.rpartition(":")
    if not (equals and colon and scope and entity_id and role):
        raise ValueError(
            f"grant {text!r} must look like SCOPE=ENTITY:ROLE, e.g. user=alice:owner"
        )
    grant = Grant(entity_id=entity_id, role=role)
    require_grant_segments(scope, grant, text)
    return scope, grant


def require_grant_segments(scope: str, grant: Grant, text: str) -> None:
    """Scope and entity id are each one storage-key segment, else ValueError.

    Keys are ``scope/entity/area/name.md``: an entity ``alice/notes`` would list
    alice's ``notes`` area as its own, so no grant may carry a '/'.
    """
    for label, value in (("scope", scope), ("entity", grant.entity_id)):
        if not is_valid_segment(value):
            raise ValueError(
                f"grant {text!r} has an invalid {label} {value!r}: use a non-empty "
                "name without '/', '\\', control characters, '.' or '..'"
            )


def parse_grants(texts: list[str]) -> dict[str, Grant]:
    grants: dict[str, Grant] = {}
    for text in texts:
        scope, grant = parse_grant(text)
        if scope in grants:
            raise ValueError(f"scope {scope!r} is granted twice; grant it once")
        grants[scope] = grant
    return grants
