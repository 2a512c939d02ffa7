"""``create`` never overwrites: a file, a directory or the root already there
is refused with the same text."""

import pytest

from app.features.memory.tests.conftest import create, make_context
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command


@pytest.mark.parametrize(
    "path", ["/memories", "/memories/notes", "/memories/notes/tea"]
)
async def test_creating_where_something_is_refused_as_existing(path: str) -> None:
    context = make_context()
    await create(context, "- [stated] oolong\n", area="notes", name="tea")
    command = RunMemoryCommand(scope="user", command="create", path=path, file_text="x")

    answer = await run_memory_command(command, context)

    assert (answer.error, answer.result) == (f"File {path} already exists", None)
