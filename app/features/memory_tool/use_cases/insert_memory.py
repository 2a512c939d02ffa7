"""``insert``: text inserted after line ``insert_line`` (0: at the top), guarded
by the version it was read at."""

from app.server.context import AppContext

from ..domain.paths import ToolRefusal
from ..domain.texts import bad_insert_line, lines_keeping_cr
from ..policy import place_of, required
from ..schemas import RunMemoryCommand
from .file_reads import require_file_to_edit
from .file_writes import edit


async def insert_memory(command: RunMemoryCommand, context: AppContext) -> str:
    place = place_of(command)
    at = required(command.insert_line, command, "insert_line")
    text = required(command.insert_text, command, "insert_text")
    await require_file_to_edit(context, command.scope, place)

    def change(content: str) -> str:
        lines = lines_keeping_cr(content)
        if at < 0 or at > len(lines):
            raise ToolRefusal(bad_insert_line(at, len(lines)))
        lines.insert(at, text.rstrip("\n"))
        edited = "\n".join(lines)
        return edited if edited.endswith("\n") else edited + "\n"

    await edit(context, command.scope, place.file, change)
    return f"The file {place.path} has been edited."
