"""Where a command acts and whether it may write there: its parsed path, the
fields it needs, and the read-only ``system/`` area."""

from .domain.paths import AREA_SLUG, ROOT_AREA, SYSTEM_AREA, Place, ToolRefusal, parse
from .domain.texts import read_only
from .schemas import RunMemoryCommand


def required[T](value: T | None, command: RunMemoryCommand, field: str) -> T:
    if value is None:
        raise ToolRefusal(f"The {command.command} command needs `{field}`.")
    return value


def place_of(command: RunMemoryCommand, field: str = "path") -> Place:
    """The place the command's ``field`` names, or the refusal of that path."""
    path: str | None = getattr(command, field)
    return parse(required(path, command, field))


def require_writable(area: str, path: str) -> None:
    if area == SYSTEM_AREA:
        raise ToolRefusal(read_only(path))


def can_list_area(name: str) -> bool:
    """A depth-one name may be a directory: an area slug, never the reserved one
    (files directly under /memories live there and are listed at the root)."""
    return AREA_SLUG.fullmatch(name) is not None and name != ROOT_AREA
