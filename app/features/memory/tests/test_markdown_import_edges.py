"""memory.import_markdown at its edges: hand-written files, odd versions and
fields, progress, what a dry run of an overwrite reports, what history records."""

from pathlib import Path
from typing import Any

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import file_key
from app.features.memory.schemas import ImportMarkdown, ReadFile
from app.features.memory.use_cases.import_markdown import import_markdown
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext
from tests.support.contexts import with_services

from .conftest import START, make_context
from .test_operator_progress import Bar, Terminal

KEY = file_key("user", "alice", "notes", "tea")


def tree(root: Path, *files: tuple[str, str]) -> Path:
    (root / "user/notes").mkdir(parents=True)
    for name, text in files:
        (root / "user/notes" / name).write_text(text)
    return root


def request(root: Path, **options: Any) -> ImportMarkdown:
    return ImportMarkdown.model_validate(
        {"scope": "user", "entity_id": "alice", "path": str(root), **options}
    )


async def tea(context: AppContext) -> tuple[str, list[str], str, str]:
    read = await read_file(ReadFile(scope="user", area="notes", name="tea"), context)
    return read.content, read.sources, read.last_updated, read.version


async def test_a_hand_written_file_is_recorded_as_the_task_s_write_now(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path, ("tea.md", "---\ndescription: Tea\n---\n- [stated] Hot.\n"))
    context = make_context(surface="task")

    await import_markdown(request(root), context)

    content, sources, updated, _ = await tea(context)
    assert (content, sources) == ("- [stated] Hot.\n", ["task"])
    assert updated == START.isoformat().replace("+00:00", "Z")
    (record,) = await context.storage.list_versions(KEY, after=None, limit=10)
    assert (record.operation, record.actor) == ("memory.import_markdown", "task")


async def test_a_version_no_storage_keeps_is_replaced_by_a_new_one(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path, ("tea.md", "---\nversion: not a version!\n---\nx\n"))
    context = make_context(surface="task")

    await import_markdown(request(root), context)

    _, _, _, version = await tea(context)
    assert version not in {"", "not a version!"}


async def test_a_restorable_version_is_kept(tmp_path: Path) -> None:
    root = tree(tmp_path, ("tea.md", "---\nversion: v-7\n---\nx\n"))
    context = make_context(surface="task")

    await import_markdown(request(root), context)

    _, _, _, version = await tea(context)
    assert version == "v-7"


async def test_unknown_fields_are_all_named(tmp_path: Path) -> None:
    root = tree(tmp_path, ("tea.md", "---\ncolour: red\nsize: 2\n---\nx\n"))

    with pytest.raises(AppError) as raised:
        await import_markdown(request(root), make_context(surface="task"))

    assert "unknown front matter fields colour, size" in str(raised.value)


async def test_a_field_of_the_wrong_shape_is_named_by_its_place(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path, ("tea.md", "---\naliases: [[1]]\n---\nx\n"))

    with pytest.raises(AppError) as raised:
        await import_markdown(request(root), make_context(surface="task"))

    assert "tea.md aliases.0: " in str(raised.value)


async def test_a_dry_run_of_an_overwrite_counts_what_it_would_overwrite(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path, ("tea.md", "---\ndescription: New\n---\nnew\n"))
    context = make_context(surface="task")
    old = tree(tmp_path / "old", ("tea.md", "---\ndescription: Old\n---\nold\n"))
    await import_markdown(request(old), context)

    report = await import_markdown(
        request(root, mode="overwrite", dry_run=True), context
    )

    assert (report.overwritten, report.skipped, report.created) == (1, 0, 0)
    content, _, _, _ = await tea(context)
    assert content == "old\n"


async def test_an_import_shows_its_check_then_its_writes(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        ("tea.md", "---\nversion: a\n---\nx\n"),
        ("milk.md", "---\nversion: b\n---\ny\n"),
    )
    terminal = Terminal()
    context = with_services(make_context(surface="task"), progress=terminal)

    await import_markdown(request(root), context)

    assert terminal.bars == [
        Bar("check_markdown", None, 2),
        Bar("import_markdown", 2, 2),
    ]
