"""Renames and edits touching system/ are refused by the use case itself,
naming the path as the agent gave it (not only the canonical one each file
move or edit checks again)."""

from typing import Any

import pytest

from app.features.memory.tests.conftest import create, make_context, seed_system
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command
from app.infra.memory.storage import MemoryStorage


def read_only(path: str) -> str:
    return (
        f"The path {path} is read-only: files under /memories/system/ are curated "
        "and cannot be changed through the memory tool."
    )


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (
            {
                "command": "rename",
                "old_path": "/memories/./system/x.md",
                "new_path": "/memories/notes/x.md",
            },
            "/memories/./system/x.md",
        ),
        (
            {
                "command": "rename",
                "old_path": "/memories/notes/tea.md",
                "new_path": "/memories/./system/tea.md",
            },
            "/memories/./system/tea.md",
        ),
        (
            {
                "command": "rename",
                "old_path": "/memories/./system",
                "new_path": "/memories/curated",
            },
            "/memories/./system",
        ),
        (
            {
                "command": "rename",
                "old_path": "/memories/notes",
                "new_path": "/memories/./system",
            },
            "/memories/./system",
        ),
        (
            {
                "command": "str_replace",
                "path": "/memories/./system/x.md",
                "old_str": "Curated",
                "new_str": "Mine",
            },
            "/memories/./system/x.md",
        ),
        (
            {
                "command": "insert",
                "path": "/memories/system/../system/x.md",
                "insert_line": 0,
                "insert_text": "- [stated] mine",
            },
            "/memories/system/../system/x.md",
        ),
    ],
)
async def test_a_change_touching_system_names_the_path_given(
    arguments: dict[str, Any], named: str
) -> None:
    storage = MemoryStorage()
    if arguments.get("new_path") != "/memories/./system":  # else it exists already
        await seed_system(storage, "x.md")
    context = make_context(storage=storage)
    await create(context, "- [stated] oolong\n", area="notes", name="tea.md")
    command = RunMemoryCommand.model_validate({"scope": "user", **arguments})

    answer = await run_memory_command(command, context)

    assert (answer.result, answer.error) == (None, read_only(named))
