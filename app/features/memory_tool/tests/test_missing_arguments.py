"""A command without an argument it needs is refused naming the command and
the argument, before anything is read or written."""

from typing import Any

import pytest

from app.features.memory.tests.conftest import make_context
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command

PATH = "/memories/notes/tea.md"
GIVEN: dict[str, dict[str, Any]] = {
    "view": {"path": PATH},
    "create": {"path": PATH, "file_text": "x"},
    "str_replace": {"path": PATH, "old_str": "a", "new_str": "b"},
    "insert": {"path": PATH, "insert_line": 0, "insert_text": "x"},
    "delete": {"path": PATH},
    "rename": {"old_path": PATH, "new_path": "/memories/notes/green.md"},
}


@pytest.mark.parametrize(
    ("command", "missing"),
    [(command, field) for command, fields in GIVEN.items() for field in fields],
)
async def test_a_missing_argument_is_named_with_its_command(
    command: str, missing: str
) -> None:
    arguments = {k: v for k, v in GIVEN[command].items() if k != missing}
    request = RunMemoryCommand.model_validate(
        {"scope": "user", "command": command, **arguments}
    )

    answer = await run_memory_command(request, make_context())

    assert (answer.error, answer.result) == (
        f"The {command} command needs `{missing}`.",
        None,
    )
