"""How the tool's commands write: version-guarded edits that retry on the
content that won, so two agents editing one file never lose an update."""

from collections.abc import Callable

from tenchi.errors import AppError

from app.features.memory.schemas import DeleteFile, WriteFile
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext

from ..domain.edit_attempts import EDIT_ATTEMPTS, edit_attempts
from ..domain.paths import ToolRefusal, memory_path
from ..domain.texts import gone
from ..policy import require_writable
from .file_reads import read_or_none


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
    async for _ in edit_attempts():
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
            if error.code == "MEMORY_NOT_FOUND":
                continue  # deleted meanwhile: the next read says it is gone
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
    async for _ in edit_attempts():
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
