"""``delete``: a file, or a directory's every file (each delete guarded by the
version it was read at)."""

from app.server.context import AppContext

from ..domain.paths import ToolRefusal
from ..policy import place_of, require_writable
from ..schemas import RunMemoryCommand
from .file_reads import look
from .file_writes import remove


async def delete_memory(command: RunMemoryCommand, context: AppContext) -> str:
    place = place_of(command)
    if place.is_root:
        raise ToolRefusal("Cannot delete the /memories directory itself")
    found = await look(context, command.scope, place)
    absent = ToolRefusal(f"The path {place.path} does not exist")
    if found.file is not None:
        require_writable(place.file[0], place.path)
        if not await remove(context, command.scope, *place.file):
            raise absent
    elif found.listed:
        require_writable(place.parts[0], place.path)
        for entry in found.listed:
            await remove(context, command.scope, entry.area, entry.name)
    else:
        raise absent
    return f"Successfully deleted {place.path}"
