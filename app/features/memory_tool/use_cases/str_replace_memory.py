"""``str_replace``: one verbatim occurrence replaced (non-overlapping matches
counted, as the reference does), guarded by the version it was read at."""

from app.server.context import AppContext

from ..domain.paths import ToolRefusal
from ..domain.texts import no_match, replaced_snippet, several_matches
from ..policy import place_of, required
from ..schemas import RunMemoryCommand
from .file_reads import require_file_to_edit
from .file_writes import edit


async def str_replace_memory(command: RunMemoryCommand, context: AppContext) -> str:
    place = place_of(command)
    old = required(command.old_str, command, "old_str")
    new = required(command.new_str, command, "new_str")
    await require_file_to_edit(context, command.scope, place)

    def change(content: str) -> str:
        count = content.count(old)
        if count == 0:
            raise ToolRefusal(no_match(place.path, old))
        if count > 1:
            raise ToolRefusal(several_matches(place.path, old, content))
        return content.replace(old, new)

    before, after = await edit(context, command.scope, place.file, change)
    return replaced_snippet(before, old, after)
