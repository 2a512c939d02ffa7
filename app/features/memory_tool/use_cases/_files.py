"""The memory operations the tool's commands are made of: reads, whole listings
and version-guarded edits that retry on the fresh content, so two agents
editing one file never lose an update."""

from collections.abc import Callable
from dataclasses import dataclass

from tenchi.errors import AppError

from app.features.memory.schemas import (
    DeleteFile,
    FileEntry,
    ListPrefix,
    MemoryFile,
    ReadFile,
    WriteFile,
)
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.list_prefix import list_prefix
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext

from ..domain.paths import AREA_SLUG, ROOT_AREA, Place, ToolRefusal, memory_path
from ..domain.texts import gone
from ..policy import require_writable

EDIT_ATTEMPTS = 8
"""Edits retried on a version conflict: each retry saw another agent's write land."""


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


async def create(
    context: AppContext, scope: str, area: str, name: str, content: str
) -> MemoryFile:
    request = WriteFile(
        scope=scope,
        area=area,
        name=name,
        content=content,
        description="",
        aliases=[],
        expected_version=None,
    )
    return await write_file(request, context)


async def edit(
    context: AppContext,
    scope: str,
    where: tuple[str, str],
    change: Callable[[str], str],
) -> tuple[str, str]:
    """Apply ``change`` to the file's content, guarded by the version it read;
    on a conflict, again on the content that won. Returns (before, after)."""
    area, name = where
    require_writable(area, memory_path(area, name))
    for _ in range(EDIT_ATTEMPTS):
        current = await read_or_none(context, scope, area, name)
        if current is None:
            raise ToolRefusal(gone(memory_path(area, name)))
        after = change(current.content)
        request = WriteFile(
            scope=scope,
            area=area,
            name=name,
            content=after,
            description=current.description,
            aliases=current.aliases,
            expected_version=current.version,
        )
        try:
            await write_file(request, context)
        except AppError as error:
            if error.code == "VERSION_CONFLICT":
                continue  # another write landed first: apply to what it left
            raise
        return current.content, after
    raise ToolRefusal(
        f"The file {memory_path(area, name)} kept changing while it was edited "
        f"({EDIT_ATTEMPTS} attempts); read it again and retry."
    )


async def remove(context: AppContext, scope: str, area: str, name: str) -> bool:
    """Delete the file at whatever version it has; False when it is absent."""
    require_writable(area, memory_path(area, name))
    for _ in range(EDIT_ATTEMPTS):
        current = await read_or_none(context, scope, area, name)
        if current is None:
            return False
        request = DeleteFile(
            scope=scope, area=area, name=name, expected_version=current.version
        )
        try:
            await delete_file(request, context)
        except AppError as error:
            if error.code in ("VERSION_CONFLICT", "MEMORY_NOT_FOUND"):
                continue  # changed or gone meanwhile: look again
            raise
        return True
    raise ToolRefusal(
        f"The file {memory_path(area, name)} kept changing while it was deleted "
        f"({EDIT_ATTEMPTS} attempts); retry."
    )


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
    if not AREA_SLUG.fullmatch(name) or name == ROOT_AREA:
        return Found(None, [])
    return Found(None, await entries(context, scope, name))
