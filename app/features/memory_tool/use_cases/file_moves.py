"""How the tool's rename moves a file: one atomic, version-guarded rename_file,
tried again on the version that won when another agent wrote the file first."""

from tenchi.errors import AppError

from app.features.memory.schemas import RenameFile
from app.features.memory.use_cases.rename_file import rename_file
from app.server.context import AppContext

from ..domain.edit_attempts import EDIT_ATTEMPTS, edit_attempts
from ..domain.paths import ToolRefusal, memory_path
from ..policy import require_writable
from .file_reads import read_or_none


async def move(
    context: AppContext, scope: str, old: tuple[str, str], new: tuple[str, str]
) -> None:
    """Move the file at ``old`` to ``new``; refused when ``new`` holds a file or
    ``old`` holds none (its reference wording), or when it kept changing."""
    old_path, new_path = memory_path(*old), memory_path(*new)
    require_writable(old[0], old_path)
    require_writable(new[0], new_path)
    async for _ in edit_attempts():
        current = await read_or_none(context, scope, *old)
        if current is None:
            raise ToolRefusal(f"The path {old_path} does not exist")
        request = RenameFile(
            scope=scope,
            area=old[0],
            name=old[1],
            new_area=new[0],
            new_name=new[1],
            expected_version=current.version,
        )
        try:
            await rename_file(request, context)
        except AppError as error:
            if error.code == "MEMORY_NOT_FOUND":
                continue  # deleted meanwhile: the next read says so
            if error.code != "VERSION_CONFLICT":
                raise
            if (error.details.get("area"), error.details.get("name")) == new:
                raise ToolRefusal(
                    f"The destination {new_path} already exists"
                ) from None
            continue  # another write landed first: rename what it left
        return
    raise ToolRefusal(
        f"The file {old_path} kept changing while it was renamed "
        f"({EDIT_ATTEMPTS} attempts); read it again and retry."
    )
