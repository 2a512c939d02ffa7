"""The memory tool's edits when another agent deletes the file between the
tool's check and its write: the agent is told the file is gone."""

from collections.abc import Awaitable, Callable

from app.features.memory.ports import Write
from app.features.memory.schemas import DeleteFile, ReadFile
from app.features.memory.tests.conftest import create, make_context
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.read_file import read_file
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command
from app.infra.memory.storage import MemoryStorage


class RacedStorage(MemoryStorage):
    """Storage that runs ``before`` (another agent's call) ahead of its first
    version-guarded put."""

    before: Callable[[], Awaitable[object]] | None = None

    async def put_if_version(self, write: Write, expected: str | None) -> str | None:
        before, self.before = self.before, None
        if before is not None:
            await before()
        return await super().put_if_version(write, expected)


async def test_a_file_deleted_during_an_edit_is_told_as_gone() -> None:
    storage = RacedStorage()
    context = make_context(storage=storage)
    await create(context, "- [stated] tea\n", area="prefs", name="a.md")
    version = (
        await read_file(ReadFile(scope="user", area="prefs", name="a.md"), context)
    ).version

    async def delete() -> None:
        request = DeleteFile(
            scope="user", area="prefs", name="a.md", expected_version=version
        )
        await delete_file(request, context)

    storage.before = delete
    command = RunMemoryCommand(
        scope="user",
        command="str_replace",
        path="/memories/prefs/a.md",
        old_str="tea",
        new_str="coffee",
    )

    answer = await run_memory_command(command, context)

    assert answer.error == (
        "The file /memories/prefs/a.md no longer exists (may have been deleted or "
        "renamed concurrently)."
    )
