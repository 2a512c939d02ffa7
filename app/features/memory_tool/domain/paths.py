"""Where a ``/memories`` path lives in Wenchang, and what cannot be represented.

``/memories/{file}`` is a file of the reserved area ``ROOT_AREA``;
``/memories/{area}/{file}`` is the file ``file`` of area ``area``. Both round
trip exactly (the name is kept as given, ``.md`` included). A deeper path, an
area that is not a slug, or a path naming the reserved area is refused with a
text that says which path would work.
"""

import re
from dataclasses import dataclass

ROOT = "/memories"
ROOT_AREA = "memories-root"
"""The area holding the files directly under ``/memories`` (never shown as one)."""
SYSTEM_AREA = "system"
AREA_SLUG = re.compile(r"[a-z0-9][a-z0-9_-]*")
MAX_PART = 256
"""The longest area or name the memory operations take."""


class ToolRefusal(Exception):
    """A command the tool refuses; its text is what Claude reads."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@dataclass(frozen=True, slots=True)
class Place:
    """A parsed path: the root (no parts), one part, or an area and a file."""

    path: str
    parts: tuple[str, ...]

    @property
    def is_root(self) -> bool:
        return not self.parts

    @property
    def file(self) -> tuple[str, str]:
        """The (area, name) a file at this path has."""
        if len(self.parts) == 1:
            return ROOT_AREA, self.parts[0]
        return self.parts[0], self.parts[1]


def _slug_for(area: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", area.lower()).strip("-_")
    return slug or "notes"


def _parts(path: str, relative: str) -> tuple[str, ...]:
    """The segments of ``relative`` with ``.`` and ``..`` resolved."""
    parts: list[str] = []
    for segment in relative.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not parts:
                raise ToolRefusal(f"Path {path} would escape /memories directory")
            parts.pop()
            continue
        parts.append(segment)
    return tuple(parts)


def parse(path: str) -> Place:
    """The place ``path`` names, or a refusal saying which path would work."""
    if not path.startswith(ROOT):
        raise ToolRefusal(f"Path must start with /memories, got: {path}")
    parts = _parts(path, path[len(ROOT) :].lstrip("/"))
    if len(parts) > 2:
        raise ToolRefusal(
            f"The path {path} is too deep: Wenchang keeps memory files at "
            f"/memories/<file> or /memories/<area>/<file>. Use "
            f"/memories/{_slug_for(parts[0])}/{'-'.join(parts[1:])} instead."
        )
    if any(len(part) > MAX_PART for part in parts):
        raise ToolRefusal(
            f"The path {path} has a part longer than {MAX_PART} characters, the "
            "most a Wenchang area or file name holds. Use a shorter name."
        )
    if parts and parts[0] == ROOT_AREA:
        raise ToolRefusal(
            f"The path {path} names {ROOT_AREA}, where Wenchang keeps the files "
            f"directly under /memories. Use /memories/{'/'.join(parts[1:]) or '<file>'}"
            " instead."
        )
    if len(parts) == 2 and not AREA_SLUG.fullmatch(parts[0]):
        raise ToolRefusal(
            f"The directory {parts[0]!r} in {path} is not a Wenchang area (a "
            "lowercase slug: a-z0-9 first, then a-z0-9, '-' or '_'). Use "
            f"/memories/{_slug_for(parts[0])}/{parts[1]} instead."
        )
    return Place(path, parts)


def memory_path(area: str, name: str) -> str:
    """The ``/memories`` path of a Wenchang file."""
    if area == ROOT_AREA:
        return f"{ROOT}/{name}"
    return f"{ROOT}/{area}/{name}"
