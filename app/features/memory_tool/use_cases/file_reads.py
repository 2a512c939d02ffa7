"""How the tool's commands read: a file or nothing, and a directory's files."""

from dataclasses import dataclass

from tenchi.errors import AppError

from app.features.memory.schemas import (
    FileEntry,
    ListPrefix,
    MemoryFile,
    ReadFile,
)
from app.features.memory.use_cases.list_prefix import list_prefix
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext

from ..domain.paths import Place, ToolRefusal
from ..domain.texts import missing
from ..policy import can_list_area, require_writable


async def read_or_none(
    context: AppContext, scope: str, area: str, name: str
) -> MemoryFile | None:
    try:
        return await read_file(ReadFile(scope=scope, area=area, name=name), context)
    except AppError as error:
        if error.code == "MEMORY_NOT_FOUND":
            return None
        raise


async def entries(context: AppContext, scope: str, area: str | None) -> list[FileEntry]:
    """Every file of the scope (or of one area), ascending by key."""
    found: list[FileEntry] = []
    cursor: str | None = None
    while True:
        request = ListPrefix(scope=scope, area=area, cursor=cursor)
        page = await list_prefix(request, context)
        found.extend(page.entries)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


@dataclass(frozen=True, slots=True)
class Found:
    """A path's file, or the files of the directory it names (empty: nothing)."""

    file: MemoryFile | None
    listed: list[FileEntry]

    @property
    def exists(self) -> bool:
        return self.file is not None or bool(self.listed)


async def look(context: AppContext, scope: str, place: Place) -> Found:
    if place.is_root:
        return Found(None, await entries(context, scope, None))
    area, name = place.file
    file = await read_or_none(context, scope, area, name)
    if file is not None or len(place.parts) == 2:
        return Found(file, [])
    if not can_list_area(name):
        return Found(None, [])
    return Found(None, await entries(context, scope, name))


async def require_file_to_edit(context: AppContext, scope: str, place: Place) -> None:
    """A file the command may edit is there, else the refusal the reference gives."""
    found = await look(context, scope, place)
    if not found.exists and not place.is_root:
        raise ToolRefusal(missing(place.path))
    if found.file is None:
        raise ToolRefusal(f"The path {place.path} is not a file.")
    require_writable(place.file[0], place.path)
