"""``str_replace``: one verbatim occurrence replaced (non-overlapping matches
counted, as the reference does), guarded by the version it was read at."""

from app.server.context import AppContext

from ..domain.paths import ToolRefusal
from ..domain.texts import missing, no_match, replaced_snippet, several_matches
from ..policy import place_of, require_writable, required
from ..schemas import RunMemoryCommand
from .file_reads import look
from .file_writes import edit


async def str_replace_memory(command: RunMemoryCommand, context: AppContext) -> str:
    place = place_of(command)
    old = required(command.old_str, command, "old_str")
    new = required(command.new_str, command, "new_str")
    found = await look(context, command.scope, place)
    if not found.exists and not place.is_root:
        raise ToolRefusal(missing(place.path))
    if found.file is None:
        raise ToolRefusal(f"The path {place.path} is not a file.")
    require_writable(place.file[0], place.path)

    def change(content: str) -> str:
        count = content.count(old)
        if count == 0:
            raise ToolRefusal(no_match(place.path, old))
        if count > 1:
            raise ToolRefusal(several_matches(place.path, old, content))
        return content.replace(old, new)

    before, after = await edit(context, command.scope, place.file, change)
    return replaced_snippet(before, old, after)
