"""``rename``: the reference's checks; the move itself waits for an atomic
rename operation (a copy and a delete could leave both or neither)."""

from app.server.context import AppContext

from ..domain.paths import ToolRefusal
from ..policy import place_of
from ..schemas import RunMemoryCommand
from .file_reads import look


async def rename_memory(command: RunMemoryCommand, context: AppContext) -> str:
    old = place_of(command, "old_path")
    new = place_of(command, "new_path")
    if old.is_root:
        raise ToolRefusal("Cannot rename the /memories directory itself")
    if new.is_root or (await look(context, command.scope, new)).exists:
        raise ToolRefusal(f"The destination {new.path} already exists")
    if not (await look(context, command.scope, old)).exists:
        raise ToolRefusal(f"The path {old.path} does not exist")
    raise ToolRefusal(
        f"Renaming is not supported by this Wenchang server yet: {old.path} was "
        "not moved."
    )
