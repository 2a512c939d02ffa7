"""The memory tool's refusals say which path would work, system/ is read-only,
and several matches are told by line."""

import pytest

from app.features.memory.tests.conftest import make_context, seed_system
from app.features.memory_tool.domain.paths import ToolRefusal, parse
from app.features.memory_tool.domain.texts import several_matches
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command
from app.infra.memory.storage import MemoryStorage


@pytest.mark.parametrize(
    ("path", "instead"),
    [
        ("/memories/__Prefs!!/a/b.md", "/memories/prefs/a-b.md"),
        ("/memories/!!!/a/b.md", "/memories/notes/a-b.md"),
    ],
)
def test_a_deep_path_is_refused_with_a_slug_area_that_would_work(
    path: str, instead: str
) -> None:
    with pytest.raises(ToolRefusal) as refused:
        parse(path)

    assert refused.value.text.endswith(f"Use {instead} instead.")


async def test_a_system_file_is_refused_as_read_only() -> None:
    context = make_context()
    command = RunMemoryCommand(
        scope="user", command="create", path="/memories/system/x.md", file_text="x"
    )

    answer = await run_memory_command(command, context)

    assert answer.error == (
        "The path /memories/system/x.md is read-only: files under /memories/system/ "
        "are curated and cannot be changed through the memory tool."
    )


async def test_a_directory_renamed_into_an_area_is_refused_saying_where_it_may_go() -> (
    None
):
    context = make_context()
    create = RunMemoryCommand(
        scope="user", command="create", path="/memories/prefs/a.md", file_text="x"
    )
    assert (await run_memory_command(create, context)).error is None
    command = RunMemoryCommand(
        scope="user",
        command="rename",
        old_path="/memories/prefs",
        new_path="/memories/drinks/prefs",
    )

    answer = await run_memory_command(command, context)

    assert answer.error == (
        "Wenchang renames the directory /memories/prefs only to another directory "
        "directly under /memories whose name is a lowercase slug, e.g. "
        "/memories/prefs-old; /memories/drinks/prefs is not one. Nothing was renamed."
    )


@pytest.mark.parametrize("path", ["/memories/system/./x.md", "/memories/./system"])
async def test_a_system_file_or_area_is_refused_by_the_path_given(path: str) -> None:
    storage = MemoryStorage()
    await seed_system(storage, "x.md")
    context = make_context(storage=storage)

    answer = await run_memory_command(
        RunMemoryCommand(scope="user", command="delete", path=path), context
    )

    assert answer.error == (
        f"The path {path} is read-only: files under /memories/system/ "
        "are curated and cannot be changed through the memory tool."
    )


def test_overlapping_occurrences_are_each_told_by_line() -> None:
    assert several_matches("/memories/a.md", "a", "aa\nb\na") == (
        "No replacement was performed. Multiple occurrences of old_str `a` "
        "in lines: 1, 1, 3. Please ensure it is unique"
    )


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (
            f"/memories/notes/{'n' * 257}",
            f"The path /memories/notes/{'n' * 257} has a part longer than 256 "
            "characters, the most a Wenchang area or file name holds. Use a "
            "shorter name.",
        ),
        (
            "/memories/memories-root/a/b.md",
            "The path /memories/memories-root/a/b.md is too deep: Wenchang keeps "
            "memory files at /memories/<file> or /memories/<area>/<file>. Use "
            "/memories/memories-root/a-b.md instead.",
        ),
        (
            "/memories/memories-root/tea.md",
            "The path /memories/memories-root/tea.md names memories-root, where "
            "Wenchang keeps the files directly under /memories. Use "
            "/memories/tea.md instead.",
        ),
        (
            "/memories/memories-root",
            "The path /memories/memories-root names memories-root, where Wenchang "
            "keeps the files directly under /memories. Use /memories/<file> "
            "instead.",
        ),
        (
            "/memories/My Notes/tea.md",
            "The directory 'My Notes' in /memories/My Notes/tea.md is not a "
            "Wenchang area (a lowercase slug: a-z0-9 first, then a-z0-9, '-' or "
            "'_'). Use /memories/my-notes/tea.md instead.",
        ),
    ],
)
def test_a_refused_path_is_told_in_a_whole_sentence(path: str, text: str) -> None:
    with pytest.raises(ToolRefusal) as refused:
        parse(path)

    assert refused.value.text == text


def test_a_part_of_256_characters_is_taken() -> None:
    assert parse(f"/memories/notes/{'n' * 256}").file == ("notes", "n" * 256)
