"""``insert`` puts its text on a line of its own, the file ending in one
newline; a refusal the agent can act on comes back as the tool's text."""

import pytest
from tenchi.errors import AppError

from app.features.memory.domain.limits import MemoryLimits
from app.features.memory.schemas import ReadFile
from app.features.memory.tests.conftest import create, make_context
from app.features.memory.use_cases.read_file import read_file
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command


@pytest.mark.parametrize(
    ("at", "text", "content"),
    [
        (1, "- [stated] b\n", "- [stated] a\n- [stated] b\n- [stated] c\n"),
        (1, "- [stated] b", "- [stated] a\n- [stated] b\n- [stated] c\n"),
        (2, "- [stated] d\n\n", "- [stated] a\n- [stated] c\n- [stated] d\n"),
        (0, "- [stated] X\n", "- [stated] X\n- [stated] a\n- [stated] c\n"),
    ],
)
async def test_inserted_text_is_a_line_of_its_own(
    at: int, text: str, content: str
) -> None:
    context = make_context()
    await create(context, "- [stated] a\n- [stated] c\n", area="prefs", name="a.md")
    command = RunMemoryCommand(
        scope="user",
        command="insert",
        path="/memories/prefs/a.md",
        insert_line=at,
        insert_text=text,
    )

    answer = await run_memory_command(command, context)

    assert answer.result == "The file /memories/prefs/a.md has been edited."
    read = await read_file(ReadFile(scope="user", area="prefs", name="a.md"), context)
    assert read.content == content


async def test_a_trailing_blank_line_is_not_kept_as_the_reference_does() -> None:
    """The reference tool splits off the last newline, then adds one only if
    missing: a file ending in a blank line loses it on an insert."""
    context = make_context()
    await create(context, "- [stated] a\n\n", area="prefs", name="a.md")
    command = RunMemoryCommand(
        scope="user",
        command="insert",
        path="/memories/prefs/a.md",
        insert_line=0,
        insert_text="- [stated] b",
    )

    assert (await run_memory_command(command, context)).error is None

    read = await read_file(ReadFile(scope="user", area="prefs", name="a.md"), context)
    assert read.content == "- [stated] b\n- [stated] a\n"


async def test_a_refusal_the_agent_can_act_on_is_its_text() -> None:
    context = make_context(limits=MemoryLimits(max_file_bytes=64))
    command = RunMemoryCommand(
        scope="user",
        command="create",
        path="/memories/prefs/big.md",
        file_text="- [stated] " + "x" * 100 + "\n",
    )
    with pytest.raises(AppError) as refused:
        await create(context, command.file_text or "", area="prefs", name="big.md")

    answer = await run_memory_command(command, context)

    assert refused.value.code == "OVERSIZE_WRITE"
    assert (answer.result, answer.error) == (None, refused.value.message)
