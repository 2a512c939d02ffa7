"""``view``: a file with line numbers, or a directory two levels deep."""

from app.features.memory.schemas import FileEntry
from app.server.context import AppContext

from ..domain.paths import ROOT_AREA, Place, ToolRefusal
from ..domain.texts import DIRECTORY_SIZE, directory_view, file_size, file_view, missing
from ..policy import place_of
from ..schemas import RunMemoryCommand
from .file_reads import look, read_or_none


async def _sized(
    context: AppContext, scope: str, entry: FileEntry, shown: str
) -> tuple[str, str]:
    file = await read_or_none(context, scope, entry.area, entry.name)
    size = len(file.content.encode()) if file is not None else 0
    return file_size(size), shown


async def _items(
    context: AppContext, scope: str, place: Place, listed: list[FileEntry]
) -> list[tuple[str, str]]:
    """(size, relative path) of each visible item, each level sorted by name,
    a directory's files right after it, as the reference walks a tree."""
    visible = [entry for entry in listed if not entry.name.startswith(".")]
    if not place.is_root:
        ordered = sorted(visible, key=lambda entry: entry.name)
        return [await _sized(context, scope, e, e.name) for e in ordered]
    areas: dict[str, list[FileEntry]] = {}
    for entry in visible:
        areas.setdefault(entry.area, []).append(entry)
    top = [(e.name, e) for e in areas.pop(ROOT_AREA, [])]
    top += [(area, None) for area in areas]
    items: list[tuple[str, str]] = []
    for name, entry in sorted(top, key=lambda item: item[0]):
        if entry is not None:
            items.append(await _sized(context, scope, entry, name))
            continue
        items.append((DIRECTORY_SIZE, f"{name}/"))
        for child in sorted(areas[name], key=lambda e: e.name):
            items.append(await _sized(context, scope, child, f"{name}/{child.name}"))
    return items


async def view_memory(command: RunMemoryCommand, context: AppContext) -> str:
    place = place_of(command)
    found = await look(context, command.scope, place)
    if found.file is not None:
        return file_view(place.path, found.file.content, command.view_range)
    if not found.exists and not place.is_root:
        raise ToolRefusal(missing(place.path))
    items = await _items(context, command.scope, place, found.listed)
    return directory_view(place.path, items)
