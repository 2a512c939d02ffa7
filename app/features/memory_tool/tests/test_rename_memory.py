"""The memory tool's directory rename stopped part-way says what moved."""

from app.features.memory.ports import Change
from app.features.memory.tests.conftest import create, make_context
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command
from app.infra.memory.storage import MemoryStorage
from app.shared.errors import backend_unavailable_error


class FailingSecondRename(MemoryStorage):
    """Storage whose second rename finds the backend gone (a fault injected)."""

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
        if self.renames == 2:
            raise backend_unavailable_error("unavailable")
        return await super().rename_if_version(
            source, destination, expected, replacing=replacing, change=change
        )


async def test_a_directory_rename_failing_part_way_says_what_was_renamed() -> None:
    context = make_context(storage=FailingSecondRename())
    for name in ("a.md", "b.md", "c.md"):
        await create(context, "- [stated] x\\n", area="prefs", name=name)

    answer = await run_memory_command(
        RunMemoryCommand(
            scope="user",
            command="rename",
            old_path="/memories/prefs",
            new_path="/memories/drinks",
        ),
        context,
    )

    assert answer.error == (
        "Renaming /memories/prefs to /memories/drinks stopped part-way at b.md: "
        "The storage backend is unavailable. Renamed to /memories/drinks: a.md. "
        "Still in /memories/prefs: b.md, c.md."
    )
