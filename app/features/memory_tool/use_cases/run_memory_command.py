"""One memory tool command, answered with the text Claude reads."""

from collections.abc import Awaitable, Callable

from tenchi.errors import AppError

from app.features.memory.policy import locate_prefix
from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.paths import ToolRefusal
from ..schemas import Command, MemoryToolAnswer, RunMemoryCommand
from .create_memory import create_memory
from .delete_memory import delete_memory
from .insert_memory import insert_memory
from .rename_memory import rename_memory
from .str_replace_memory import str_replace_memory
from .view_memory import view_memory

COMMANDS: dict[Command, Callable[[RunMemoryCommand, AppContext], Awaitable[str]]] = {
    "view": view_memory,
    "create": create_memory,
    "str_replace": str_replace_memory,
    "insert": insert_memory,
    "delete": delete_memory,
    "rename": rename_memory,
}
AGENT_ERRORS = frozenset(
    {"INVALID_ARGUMENT", "OVERSIZE_WRITE", "FILE_QUOTA_EXCEEDED", "RESTRICTED_SCOPE"}
)
"""Refusals the agent can act on (a name, a size, a quota, a role): told as text.
Anything else (an outage, a bad token) stays the HTTP caller's error."""


async def run_memory_command(
    request: RunMemoryCommand, context: AppContext
) -> MemoryToolAnswer:
    identity = require_identity(context.identity)
    # An ungranted scope is the integration's mistake, not the agent's: an HTTP error.
    locate_prefix(identity, request.scope, None)
    try:
        text = await COMMANDS[request.command](request, context)
    except ToolRefusal as refusal:
        return MemoryToolAnswer(error=refusal.text)
    except AppError as error:
        if error.code not in AGENT_ERRORS:
            raise
        return MemoryToolAnswer(error=error.message)
    return MemoryToolAnswer(result=text)
