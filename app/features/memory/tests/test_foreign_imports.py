"""memory.import_mcp_memory and memory.import_basic_memory as use cases over
MemoryStorage, on the sample files in tests/samples (written from each format's
published description)."""

from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import file_key
from app.features.memory.schemas import (
    ImportMode,
    ReadFile,
)
from app.features.memory.use_cases.import_basic_memory import import_basic_memory
from app.features.memory.use_cases.import_mcp_memory import import_mcp_memory
from app.features.memory.use_cases.read_file import read_file
from app.shared.errors import import_conflict

from .conftest import (
    ScriptedStorage,
    create,
    make_context,
    recreate,
    rewrite,
    snapshot,
)
from .foreign_samples import basic, mcp, read


async def test_each_entity_becomes_a_file_of_fact_lines_and_relations() -> None:
    context = make_context(surface="task")

    report = await import_mcp_memory(mcp(), context)

    assert report.created == ["Ada Okafor", "Harbor Labs", "Tidewatch", "Lagos"]
    assert (report.area, report.changed, report.unchanged) == ("knowledge", True, [])
    assert await read(context, "knowledge", "Ada Okafor") == (
        "- [stated] Prefers tea over coffee\n"
        "- [stated] Works remotely from Lagos\n"
        "- [stated] Reviews pull requests in the morning\n"
        "\n"
        "## Relations\n"
        "- works_at [[Harbor Labs]]\n"
        "- maintains [[Tidewatch]]\n",
        "person",
        [],
    )
    assert await read(context, "knowledge", "Lagos") == ("", "city", [])
    found = await read_file(
        ReadFile(scope="user", area="knowledge", name="Tidewatch"), context
    )
    assert found.sources == ["task"]
    assert found.content.endswith("- depends_on [[Pacific Tide Tables]]\n")


async def test_a_rerun_changes_nothing_and_says_so() -> None:
    context = make_context(surface="task")
    await import_mcp_memory(mcp(), context)
    await import_basic_memory(basic(), context)
    before = await snapshot(context.storage)

    again = await import_mcp_memory(mcp(), context)
    notes = await import_basic_memory(basic(), context)

    assert (again.changed, again.created, again.overwritten) == (False, [], [])
    assert again.unchanged == ["Ada Okafor", "Harbor Labs", "Tidewatch", "Lagos"]
    assert (notes.changed, notes.unchanged) == (
        False,
        ["Ada Okafor", "reading-list", "Search Design"],
    )
    assert await snapshot(context.storage) == before
    key = file_key("user", "alice", "knowledge", "Ada Okafor")
    (record,) = await context.storage.list_versions(key, after=None, limit=10)
    assert (record.operation, record.actor) == ("memory.import_mcp_memory", "task")


@pytest.mark.parametrize("run", ["mcp", "basic"])
async def test_a_dry_run_reports_and_writes_nothing(run: str) -> None:
    context = make_context(surface="task")

    if run == "mcp":
        report = await import_mcp_memory(mcp(dry_run=True), context)
    else:
        report = await import_basic_memory(basic(dry_run=True), context)

    assert report.dry_run and report.changed and len(report.created) >= 3
    assert await snapshot(context.storage) == []


async def test_mode_fail_refuses_other_content_and_writes_nothing() -> None:
    context = make_context(surface="task")
    await create(context, "- [stated] mine\n", area="knowledge", name="Tidewatch")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as raised:
        await import_mcp_memory(mcp(), context)

    assert raised.value.definition is import_conflict
    assert raised.value.details["existing"] == ["knowledge/Tidewatch"]
    assert await snapshot(context.storage) == before
    with pytest.raises(AppError):  # a dry run reports the same refusal
        await import_mcp_memory(mcp(dry_run=True), context)


async def test_mode_skip_keeps_and_mode_overwrite_replaces() -> None:
    context = make_context(surface="http")
    await create(context, "- [stated] mine\n", area="knowledge", name="Tidewatch")
    task = make_context(storage=context.storage, surface="task")

    skipped = await import_mcp_memory(mcp(mode=ImportMode.SKIP), task)
    assert skipped.skipped == ["Tidewatch"] and len(skipped.created) == 3
    assert (await read(task, "knowledge", "Tidewatch"))[0] == "- [stated] mine\n"

    replaced = await import_mcp_memory(mcp(mode=ImportMode.OVERWRITE), task)
    assert replaced.overwritten == ["Tidewatch"]
    assert replaced.unchanged == ["Ada Okafor", "Harbor Labs", "Lagos"]
    found = await read_file(
        ReadFile(scope="user", area="knowledge", name="Tidewatch"), task
    )
    assert found.content.startswith("- [stated] Written in Rust\n")
    assert found.sources == ["http", "task"]  # sources only ever grow


async def test_each_note_keeps_its_body_with_observations_as_fact_lines() -> None:
    context = make_context(surface="task")

    report = await import_basic_memory(basic(), context)

    # .obsidian/ is hidden and attachment.txt is no note: neither is imported
    assert report.created == ["Ada Okafor", "reading-list", "Search Design"]
    assert await read(context, "notes", "Ada Okafor") == (
        "# Ada Okafor\n\n## Observations\n"
        "- [stated] role: Maintains Tidewatch\n"
        "- [stated] preference: Prefers tea over coffee\n"
        "- [stated] Works remotely from Lagos\n"
        "\n## Relations\n- works_at [[Harbor Labs]]\n- maintains [[Tidewatch]]\n",
        "Maintainer of Tidewatch at Harbor Labs",
        ["people/ada-okafor", "mentor", "rust"],
    )
    content, description, aliases = await read(context, "notes", "Search Design")
    assert (description, aliases) == (
        "note",
        ["search-design", "search", "architecture"],
    )
    lines = content.splitlines()
    assert lines[:3] == [
        "# Search Design",
        "",
        "How the team decided to build full-text search, and what is still open.",
    ]
    assert lines[5:13] == [
        "- [stated] decision: Use SQLite FTS5 for the first release #search "
        "(cheaper than a separate service)",
        "- [stated] requirement: Results must appear within a second of a write",
        "- [observed] Most queries are two words or fewer",
        "- [ ] Benchmark the tokenizer on Thai text",
        "- [x] Write the ranking notes",
        "- [00:12:30] Lunch break in the design review transcript",
        "- [stated] Latency budget is tight on mobile #performance",
        "- See [the ranking paper](https://example.org/bm25) for background",
    ]
    assert "- [example] This line is inside a code block" in content
    assert content.endswith(
        "- implements [[Search Requirements]]\n"
        "- depends_on [[Storage Layer]] (for the postings table)\n"
        "- [[Ranking Notes]]\n"
    )
    reading, described, _ = await read(context, "notes", "reading-list")
    assert described == "note"
    assert "- [stated] book: A Pattern Language\n" in reading


async def test_a_file_changed_during_the_import_is_judged_again(tmp_path: Path) -> None:
    note = tmp_path / "tea.md"
    note.write_text("- [fact] Green tea at noon\n")
    storage = ScriptedStorage(races=[recreate("- [stated] theirs\n")])
    context = make_context(storage=storage, surface="task")

    with pytest.raises(AppError) as raised:  # created meanwhile: mode fail refuses
        await import_basic_memory(basic(note), context)
    assert raised.value.definition is import_conflict

    storage.races = [rewrite("- [stated] newer\n")]
    report = await import_basic_memory(basic(note, mode="overwrite"), context)

    assert report.overwritten == ["tea"] and storage.conditional_puts == 3
    content, _, _ = await read(context, "notes", "tea")
    assert content == "- [stated] fact: Green tea at noon\n"
