"""The memory tool's delete when another agent changes the file between the
tool's read and its guarded delete: it reads again and deletes what is there,
says the path is gone if it is, and gives up, saying so, if it keeps changing."""

from collections.abc import Awaitable, Callable

from app.features.memory.ports import Change
from app.features.memory.schemas import AppendLine, DeleteFile, ReadFile
from app.features.memory.tests.conftest import create, make_context
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.read_file import read_file
from app.features.memory_tool.domain import edit_attempts as schedule
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext

PATH = "/memories/prefs/a.md"
READ = ReadFile(scope="user", area="prefs", name="a.md")


class RacedStorage(MemoryStorage):
    """Storage that runs the next of ``before`` (another agent's call) ahead of
    each version-guarded delete while any is left."""

    def __init__(self) -> None:
        super().__init__()
        self.before: list[Callable[[], Awaitable[object]]] = []

    async def delete_if_version(
        self, key: str, expected: str, *, change: Change | None = None
    ) -> bool:
        if self.before:
            await self.before.pop(0)()
        return await super().delete_if_version(key, expected, change=change)


async def raced() -> tuple[RacedStorage, AppContext]:
    storage = RacedStorage()
    context = make_context(storage=storage)
    await create(context, "- [stated] tea\n", area="prefs", name="a.md")
    return storage, context


def appending(context: AppContext) -> Callable[[], Awaitable[object]]:
    async def append() -> None:
        version = (await read_file(READ, context)).version
        line = AppendLine(
            scope="user",
            area="prefs",
            name="a.md",
            line="- [stated] more",
            expected_version=version,
        )
        await append_line(line, context)

    return append


def deleting(context: AppContext) -> Callable[[], Awaitable[object]]:
    async def delete() -> None:
        version = (await read_file(READ, context)).version
        request = DeleteFile(
            scope="user", area="prefs", name="a.md", expected_version=version
        )
        await delete_file(request, context)

    return delete


async def tool_delete(context: AppContext) -> tuple[str | None, str | None]:
    command = RunMemoryCommand(scope="user", command="delete", path=PATH)
    answer = await run_memory_command(command, context)
    return answer.result, answer.error


async def test_a_file_changed_before_the_delete_is_read_again_and_deleted() -> None:
    storage, context = await raced()
    storage.before = [appending(context)]

    assert await tool_delete(context) == (f"Successfully deleted {PATH}", None)
    assert storage.before == []
    assert await tool_delete(context) == (None, f"The path {PATH} does not exist")


async def test_a_file_deleted_before_the_delete_is_told_as_absent() -> None:
    storage, context = await raced()
    storage.before = [deleting(context)]

    assert await tool_delete(context) == (None, f"The path {PATH} does not exist")


async def test_a_file_that_keeps_changing_is_given_up_on_saying_so(
    no_retry_waits: None,
) -> None:
    storage, context = await raced()
    storage.before = [appending(context) for _ in range(schedule.EDIT_ATTEMPTS)]

    assert await tool_delete(context) == (
        None,
        f"The file {PATH} kept changing while it was deleted "
        f"({schedule.EDIT_ATTEMPTS} attempts); retry.",
    )
    assert storage.before == []
