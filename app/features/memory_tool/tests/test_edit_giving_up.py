"""An edit of a file another agent changes before every guarded write is
given up on after EDIT_ATTEMPTS, saying so; a created file carries only its
content."""

from collections.abc import Awaitable, Callable

from app.features.memory.ports import Write
from app.features.memory.schemas import AppendLine, ReadFile
from app.features.memory.tests.conftest import create, make_context
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.read_file import read_file
from app.features.memory_tool.domain import edit_attempts as schedule
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext

READ = ReadFile(scope="user", area="prefs", name="a.md")


class RacedStorage(MemoryStorage):
    """Storage that runs the next of ``before`` (another agent's write) ahead of
    each guarded put but that agent's own."""

    def __init__(self) -> None:
        super().__init__()
        self.before: list[Callable[[], Awaitable[object]]] = []
        self.racing = False

    async def put_if_version(self, write: Write, expected: str | None) -> str | None:
        if self.before and not self.racing:
            self.racing = True
            try:
                await self.before.pop(0)()
            finally:
                self.racing = False
        return await super().put_if_version(write, expected)


def appending(context: AppContext, n: int) -> Callable[[], Awaitable[object]]:
    async def append() -> None:
        version = (await read_file(READ, context)).version
        line = f"- [stated] other {n}"
        request = AppendLine(
            scope="user", area="prefs", name="a.md", line=line, expected_version=version
        )
        await append_line(request, context)

    return append


async def test_an_edit_that_keeps_losing_is_given_up_on_saying_so(
    no_retry_waits: None,
) -> None:
    storage = RacedStorage()
    context = make_context(storage=storage)
    await create(context, "- [stated] tea\n", area="prefs", name="a.md")
    storage.before = [appending(context, n) for n in range(schedule.EDIT_ATTEMPTS)]
    command = RunMemoryCommand(
        scope="user",
        command="str_replace",
        path="/memories/prefs/a.md",
        old_str="tea",
        new_str="coffee",
    )

    answer = await run_memory_command(command, context)

    assert (answer.result, answer.error) == (
        None,
        "The file /memories/prefs/a.md kept changing while it was edited "
        f"({schedule.EDIT_ATTEMPTS} attempts); read it again and retry.",
    )
    assert storage.before == []
    assert "coffee" not in (await read_file(READ, context)).content


async def test_a_created_file_has_no_description_or_aliases() -> None:
    context = make_context()
    command = RunMemoryCommand(
        scope="user", command="create", path="/memories/prefs/a.md", file_text="x\n"
    )

    assert (await run_memory_command(command, context)).error is None

    made = await read_file(READ, context)
    assert (made.content, made.description, made.aliases) == ("x\n", "", [])
