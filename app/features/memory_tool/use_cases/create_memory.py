"""``create``: a new file; an existing one is refused, never overwritten."""

from tenchi.errors import AppError

from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext

from ..domain.paths import ToolRefusal
from ..domain.requests import new_file
from ..policy import place_of, require_writable, required
from ..schemas import RunMemoryCommand
from .file_reads import look


async def create_memory(command: RunMemoryCommand, context: AppContext) -> str:
    place = place_of(command)
    text = required(command.file_text, command, "file_text")
    exists = f"File {place.path} already exists"
    if place.is_root or (await look(context, command.scope, place)).listed:
        raise ToolRefusal(exists)  # a directory is there
    area, name = place.file
    require_writable(area, place.path)
    try:
        await write_file(new_file(command.scope, area, name, text), context)
    except AppError as error:
        if error.code == "VERSION_CONFLICT":
            raise ToolRefusal(exists) from error
        raise
    return f"File created successfully at: {place.path}"
