"""Storage keys of memory files: ``scope/entity/area/name.md``, and back."""

from dataclasses import dataclass

from app.shared.locations import Location

SYSTEM_AREA = "system"


@dataclass(frozen=True, slots=True)
class Address:
    """A resolved file: where the caller sees it and the storage key behind it."""

    location: Location
    key: str
    entity_prefix: str


def file_key(scope: str, entity_id: str, area: str, name: str) -> str:
    return f"{scope}/{entity_id}/{area}/{name}.md"


def entity_prefix(scope: str, entity_id: str) -> str:
    return f"{scope}/{entity_id}/"


def entity_prefix_of_key(key: str) -> str:
    """The entity prefix (``scope/entity/``) of a storage key.

    A string with nothing past its entity part is returned whole: the SQLite
    change-marker trigger calls this on every row, so it never raises.
    """
    scope, entity, rest = (*key.split("/", 2), "", "")[:3]
    return f"{scope}/{entity}/" if rest else key


def entity_prefix_of_reach(prefix: str) -> str:
    """The entity prefix a search reach prefix (an entity or its area) lies under.

    A prefix without an entity part raises ValueError.
    """
    scope, entity, *_ = prefix.split("/")
    return f"{scope}/{entity}/"


def address_of(location: Location, entity_id: str) -> Address:
    return Address(
        location=location,
        key=file_key(location.scope, entity_id, location.area, location.name),
        entity_prefix=entity_prefix(location.scope, entity_id),
    )


def split_key(key: str) -> tuple[str, str, str] | None:
    """(scope, area, name) of a well-formed file key, else None."""
    parts = key.split("/")
    if len(parts) != 4 or not parts[3].endswith(".md") or len(parts[3]) <= 3:
        return None
    return parts[0], parts[2], parts[3][:-3]
