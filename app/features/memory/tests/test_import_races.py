"""Imports racing other writers: a lost guarded put is judged again or reported
with the file as it is now, and the versions a markdown tree names."""

from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import file_key
from app.features.memory.ports import FileMetadata, Write
from app.features.memory.ports.import_writes import Restore, write_restore
from app.features.memory.schemas import DeleteFile, ImportMarkdown, ReadFile
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.import_basic_memory import import_basic_memory
from app.features.memory.use_cases.import_markdown import import_markdown
from app.features.memory.use_cases.read_file import read_file
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext
from app.shared.errors import version_conflict

from .conftest import START, ScriptedStorage, make_context, recreate, rewrite
from .foreign_samples import basic, read
from .test_import_writes import ADDRESS, IMPORT, record

KEY = file_key("user", "alice", "notes", "tea")


def conflict_content(error: AppError) -> str:
    assert error.definition is version_conflict
    return str(error.details["content"])


async def test_a_replayed_history_losing_to_another_writer_reports_its_file() -> None:
    storage = ScriptedStorage(races=[recreate("- [stated] theirs\n")])
    records = (record(0), record(1))
    restore = Restore(ADDRESS, records[-1].data, records[-1].metadata, records)

    with pytest.raises(AppError) as raised:
        await write_restore(storage, restore, IMPORT, overwrite=False)

    assert conflict_content(raised.value) == "- [stated] theirs\n"


async def test_an_overwrite_losing_every_try_reports_the_file_as_it_is_now() -> None:
    storage = ScriptedStorage()
    storage.races.extend(rewrite(f"- [stated] newer {i}\n") for i in range(3))
    await storage.inner.put(
        Write(KEY, b"- [stated] old\n", FileMetadata("", (), ("http",), START))
    )
    restore = Restore(ADDRESS, b"- [stated] mine\n", record(0).metadata)

    with pytest.raises(AppError) as raised:
        await write_restore(storage, restore, IMPORT, overwrite=True)

    assert conflict_content(raised.value) == "- [stated] newer 2\n"
    assert storage.conditional_puts == 3


def tea_note(root: Path) -> Path:
    note = root / "tea.md"
    note.write_text("- [fact] Green tea at noon\n")
    return note


async def test_a_note_losing_every_try_reports_the_file_as_it_is_now(
    tmp_path: Path,
) -> None:
    storage = ScriptedStorage()
    context = make_context(storage=storage, surface="task")
    storage.races.extend(rewrite(f"- [stated] newer {i}\n") for i in range(3))
    await storage.inner.put(
        Write(KEY, b"- [stated] old\n", FileMetadata("", (), ("http",), START))
    )

    with pytest.raises(AppError) as raised:
        await import_basic_memory(basic(tea_note(tmp_path), mode="overwrite"), context)

    assert conflict_content(raised.value) == "- [stated] newer 2\n"


async def test_a_note_created_meanwhile_is_skipped_in_mode_skip(tmp_path: Path) -> None:
    storage = ScriptedStorage(races=[recreate("- [stated] theirs\n")])
    context = make_context(storage=storage, surface="task")

    report = await import_basic_memory(basic(tea_note(tmp_path), mode="skip"), context)

    assert (report.skipped, report.created) == (["tea"], [])
    content, _, _ = await read(context, "notes", "tea")
    assert content == "- [stated] theirs\n"


async def test_a_note_another_writer_already_wrote_alike_is_unchanged(
    tmp_path: Path,
) -> None:
    """The racer wrote exactly the note: nothing more is written."""

    async def alike(inner: MemoryStorage) -> None:
        meta = FileMetadata("note", (), ("http",), START)
        await inner.put(Write(KEY, b"- [stated] fact: Green tea at noon\n", meta))

    storage = ScriptedStorage(races=[alike])
    context = make_context(storage=storage, surface="task")

    report = await import_basic_memory(
        basic(tea_note(tmp_path), mode="overwrite"), context
    )

    assert (report.unchanged, report.created) == (["tea"], [])
    assert storage.conditional_puts == 1


async def test_an_overwrite_of_a_note_takes_one_guarded_put(tmp_path: Path) -> None:
    storage = ScriptedStorage()
    context = make_context(storage=storage, surface="task")
    await storage.inner.put(
        Write(KEY, b"- [stated] old\n", FileMetadata("", (), ("http",), START))
    )

    report = await import_basic_memory(
        basic(tea_note(tmp_path), mode="overwrite"), context
    )

    assert report.overwritten == ["tea"] and storage.conditional_puts == 1


def tree(root: Path, text: str) -> ImportMarkdown:
    (root / "user/notes").mkdir(parents=True, exist_ok=True)
    (root / "user/notes/tea.md").write_text(text)
    return ImportMarkdown.model_validate(
        {"scope": "user", "entity_id": "alice", "path": str(root), "mode": "overwrite"}
    )


async def version_of(context: AppContext) -> str:
    found = await read_file(ReadFile(scope="user", area="notes", name="tea"), context)
    return found.version


async def test_a_tree_file_losing_its_put_reports_the_file_as_it_is_now(
    tmp_path: Path,
) -> None:
    storage = ScriptedStorage(races=[recreate("- [stated] theirs\n")])
    context = make_context(storage=storage, surface="task")

    with pytest.raises(AppError) as raised:
        await import_markdown(tree(tmp_path, "---\nversion: v-7\n---\nmine\n"), context)

    assert conflict_content(raised.value) == "- [stated] theirs\n"


async def test_an_overwrite_from_a_tree_never_takes_the_version_it_names(
    tmp_path: Path,
) -> None:
    context = make_context(storage=MemoryStorage(), surface="task")
    await context.storage.put(
        Write(KEY, b"old\n", FileMetadata("", (), ("http",), START))
    )

    await import_markdown(tree(tmp_path, "---\nversion: v-7\n---\nmine\n"), context)

    assert await version_of(context) != "v-7"


async def test_a_create_from_a_tree_never_reuses_a_version_of_its_history(
    tmp_path: Path,
) -> None:
    context = make_context(storage=MemoryStorage(), surface="task")
    request = tree(tmp_path, "---\nversion: v-7\n---\nmine\n")
    await import_markdown(request, context)
    assert await version_of(context) == "v-7"
    await delete_file(
        DeleteFile(scope="user", area="notes", name="tea", expected_version="v-7"),
        context,
    )

    await import_markdown(request, context)

    assert await version_of(context) != "v-7"


async def test_a_dry_run_judges_each_note_against_what_is_stored(
    tmp_path: Path,
) -> None:
    """Unchanged where storage holds it alike, skipped where it holds other content."""
    note = tea_note(tmp_path)
    context = make_context(storage=MemoryStorage(), surface="task")
    await import_basic_memory(basic(note), context)

    again = await import_basic_memory(basic(note, dry_run=True), context)
    note.write_text("- [fact] Oolong instead\n")
    skipping = await import_basic_memory(
        basic(note, mode="skip", dry_run=True), context
    )

    assert (again.unchanged, again.created) == (["tea"], [])
    assert (skipping.skipped, skipping.overwritten) == (["tea"], [])
