"""The memory tool's HTTP contract: one command object in, its text out."""

from tenchi.contracts import contract

from app.features.memory.schemas import ScopePath
from app.shared.errors import invalid_argument

from .schemas import MemoryCommand, MemoryToolAnswer

run_memory_command_contract = contract(
    method="POST",
    path="/memory-tool/{scope}",
    params=ScopePath,
    request=MemoryCommand,
    response=MemoryToolAnswer,
    errors=(invalid_argument,),
    name="run_memory_command",
    summary="Run one command of Claude's memory tool (memory_20250818) on a scope.",
    description=(
        "Takes the command object Claude sends (view, create, str_replace, insert, "
        "delete, rename under /memories) and answers {result} or {error} with the "
        "texts of the Anthropic SDK's reference implementation. /memories/<file> "
        "and /memories/<area>/<file> round trip; every edit is version-guarded and "
        "retried on the content that won a conflict."
    ),
    tags=("memory-tool",),
)
