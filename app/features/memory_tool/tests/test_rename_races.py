"""The memory tool's file rename when another agent writes or deletes the file
between the tool's read and its rename: a write is renamed as it landed, a
delete is told as a missing path, a destination created meanwhile is refused
and kept, and a file that changes before every rename is given up on."""

from collections.abc import Awaitable, Callable

from app.features.memory.ports import Change
from app.features.memory.schemas import DeleteFile, ReadFile, WriteFile
from app.features.memory.tests.conftest import create, make_context
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.write_file import write_file
from app.features.memory_tool.domain import edit_attempts as schedule
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext


class RacedStorage(MemoryStorage):
    """Storage that runs ``before`` (another agent's call, or a fault) ahead of
    its rename number ``at``."""

    before: Callable[[], Awaitable[object]] | None = None
    at = 1
    renames = 0

    async def rename_if_version(
        self,
        source: str,
        destination: str,
        expected: str,
        *,
        replacing: str | None,
        change: Change,
    ) -> str | None:
        self.renames += 1
        if self.before is not None and self.renames == self.at:
            await self.before()
        return await super().rename_if_version(
            source, destination, expected, replacing=replacing, change=change
        )


def rename(old: str, new: str) -> RunMemoryCommand:
    return RunMemoryCommand(scope="user", command="rename", old_path=old, new_path=new)


async def content_of(context: AppContext, area: str, name: str) -> str:
    request = ReadFile(scope="user", area=area, name=name)
    return (await read_file(request, context)).content


async def deleter(
    context: AppContext, area: str, name: str
) -> Callable[[], Awaitable[None]]:
    version = (
        await read_file(ReadFile(scope="user", area=area, name=name), context)
    ).version

    async def delete() -> None:
        request = DeleteFile(
            scope="user", area=area, name=name, expected_version=version
        )
        await delete_file(request, context)

    return delete


async def test_a_write_landing_first_is_renamed_as_it_landed() -> None:
    storage = RacedStorage()
    context = make_context(storage=storage)
    first = await create(context, "- [stated] tea\n", area="prefs", name="a.md")

    async def overwrite() -> None:
        request = WriteFile(
            scope="user",
            area="prefs",
            name="a.md",
            content="- [stated] coffee\n",
            description="",
            aliases=[],
            expected_version=first.version,
        )
        await write_file(request, context)

    storage.before = overwrite
    answer = await run_memory_command(
        rename("/memories/prefs/a.md", "/memories/drinks/b.md"), context
    )

    assert answer.error is None
    assert (
        answer.result
        == "Successfully renamed /memories/prefs/a.md to /memories/drinks/b.md"
    )
    assert await content_of(context, "drinks", "b.md") == "- [stated] coffee\n"


async def test_a_file_deleted_before_its_rename_is_a_missing_path() -> None:
    storage = RacedStorage()
    context = make_context(storage=storage)
    await create(context, "- [stated] tea\n", area="prefs", name="a.md")
    storage.before = await deleter(context, "prefs", "a.md")
    answer = await run_memory_command(
        rename("/memories/prefs/a.md", "/memories/drinks/b.md"), context
    )

    assert answer.result is None
    assert answer.error == "The path /memories/prefs/a.md does not exist"


async def test_a_directory_rename_stopped_at_its_first_file_says_none_moved() -> None:
    storage = RacedStorage()
    context = make_context(storage=storage)
    for name in ("a.md", "b.md"):
        await create(context, "- [stated] x\n", area="prefs", name=name)
    storage.before = await deleter(context, "prefs", "a.md")

    answer = await run_memory_command(
        rename("/memories/prefs", "/memories/drinks"), context
    )

    assert answer.error == (
        "Renaming /memories/prefs to /memories/drinks stopped part-way at a.md: "
        "The path /memories/prefs/a.md does not exist Renamed to /memories/drinks: "
        "none. Still in /memories/prefs: a.md, b.md."
    )


async def test_a_directory_rename_stopped_by_a_fault_names_it_and_what_moved() -> None:
    storage = RacedStorage()
    storage.at = 3
    context = make_context(storage=storage)
    for name in ("a.md", "b.md", "c.md"):
        await create(context, "- [stated] x\n", area="prefs", name=name)

    async def fault() -> None:
        raise RuntimeError("the disk is full.")

    storage.before = fault
    answer = await run_memory_command(
        rename("/memories/prefs", "/memories/drinks"), context
    )

    assert answer.error == (
        "Renaming /memories/prefs to /memories/drinks stopped part-way at c.md: "
        "the disk is full. Renamed to /memories/drinks: a.md, b.md. "
        "Still in /memories/prefs: c.md."
    )


async def test_a_destination_created_before_the_rename_is_refused_and_kept() -> None:
    storage = RacedStorage()
    context = make_context(storage=storage)
    await create(context, "- [stated] tea\n", area="prefs", name="a.md")

    async def create_destination() -> None:
        await create(context, "- [stated] theirs\n", area="drinks", name="b.md")

    storage.before = create_destination
    answer = await run_memory_command(
        rename("/memories/prefs/a.md", "/memories/drinks/b.md"), context
    )

    assert (answer.result, answer.error) == (
        None,
        "The destination /memories/drinks/b.md already exists",
    )
    assert storage.renames == 1
    assert await content_of(context, "drinks", "b.md") == "- [stated] theirs\n"
    assert await content_of(context, "prefs", "a.md") == "- [stated] tea\n"


async def test_a_file_changed_before_every_rename_is_given_up_on_saying_so(
    no_retry_waits: None,
) -> None:
    storage = RacedStorage()
    context = make_context(storage=storage)
    await create(context, "- [stated] tea 0\n", area="prefs", name="a.md")

    async def overwrite() -> None:
        current = await read_file(
            ReadFile(scope="user", area="prefs", name="a.md"), context
        )
        request = WriteFile(
            scope="user",
            area="prefs",
            name="a.md",
            content=f"- [stated] tea {storage.at}\n",
            description="",
            aliases=[],
            expected_version=current.version,
        )
        await write_file(request, context)
        storage.at += 1  # the other agent writes again before the next rename

    storage.before = overwrite
    answer = await run_memory_command(
        rename("/memories/prefs/a.md", "/memories/drinks/b.md"), context
    )

    assert (answer.result, answer.error) == (
        None,
        "The file /memories/prefs/a.md kept changing while it was renamed "
        f"({schedule.EDIT_ATTEMPTS} attempts); read it again and retry.",
    )
    assert storage.renames == schedule.EDIT_ATTEMPTS
    last = f"- [stated] tea {schedule.EDIT_ATTEMPTS}\n"
    assert await content_of(context, "prefs", "a.md") == last
