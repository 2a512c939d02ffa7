"""``rename``: a file moved by one atomic rename_file (history and all); a
directory (an area) moved file by file, saying what moved if one fails."""

from tenchi.errors import AppError

from app.server.context import AppContext

from ..domain.paths import AREA_SLUG, Place, ToolRefusal
from ..policy import place_of, require_writable
from ..schemas import RunMemoryCommand
from .file_moves import move
from .file_reads import look


async def rename_memory(command: RunMemoryCommand, context: AppContext) -> str:
    old = place_of(command, "old_path")
    new = place_of(command, "new_path")
    if old.is_root:
        raise ToolRefusal("Cannot rename the /memories directory itself")
    if new.is_root or (await look(context, command.scope, new)).exists:
        raise ToolRefusal(f"The destination {new.path} already exists")
    found = await look(context, command.scope, old)
    if not found.exists:
        raise ToolRefusal(f"The path {old.path} does not exist")
    if found.file is not None:
        require_writable(old.file[0], old.path)
        require_writable(new.file[0], new.path)
        await move(context, command.scope, old.file, new.file)
    else:
        area = _new_area(old, new)
        require_writable(old.parts[0], old.path)
        require_writable(area, new.path)
        names = [entry.name for entry in found.listed]
        for done, name in enumerate(names):
            try:
                await move(context, command.scope, (old.parts[0], name), (area, name))
            except Exception as error:  # reported with what moved, then re-raised
                raise ToolRefusal(_part_way(old, new, names, done, error)) from error
    return f"Successfully renamed {old.path} to {new.path}"


def _new_area(old: Place, new: Place) -> str:
    """A directory moves only to another area directly under /memories."""
    if len(new.parts) != 1 or not AREA_SLUG.fullmatch(new.parts[0]):
        raise ToolRefusal(
            f"Wenchang renames the directory {old.path} only to another directory "
            "directly under /memories whose name is a lowercase slug, e.g. "
            f"/memories/{old.parts[0]}-old; {new.path} is not one. Nothing was renamed."
        )
    return new.parts[0]


def _part_way(
    old: Place, new: Place, names: list[str], done: int, error: Exception
) -> str:
    reason = error.text if isinstance(error, ToolRefusal) else str(error)
    if isinstance(error, AppError):
        reason = error.definition.message  # its guidance is the caller's, not here
    moved = ", ".join(names[:done]) or "none"
    left = ", ".join(names[done:])
    return (
        f"Renaming {old.path} to {new.path} stopped part-way at {names[done]}: "
        f"{reason} Renamed to {new.path}: {moved}. Still in {old.path}: {left}."
    )
