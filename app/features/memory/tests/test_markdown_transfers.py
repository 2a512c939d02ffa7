"""memory.export_markdown and memory.import_markdown over in-process storage."""

from pathlib import Path
from typing import Any

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import file_key
from app.features.memory.schemas import (
    ExportMarkdown,
    ImportMarkdown,
    ImportMemory,
    PurgeMemory,
)
from app.features.memory.use_cases.export_markdown import export_markdown
from app.features.memory.use_cases.import_markdown import import_markdown
from app.features.memory.use_cases.import_memory import import_memory
from app.features.memory.use_cases.purge_memory import purge_memory
from app.server.context import AppContext
from app.shared.errors import import_conflict, invalid_argument

from .conftest import make_context

ENTITY = {"scope": "user", "entity_id": "alice"}
FILES: list[dict[str, Any]] = [
    {"area": "system", "name": "rules", "content": "- [system] Be kind.\n"},
    {
        "area": "notes",
        "name": "café ☕ %2F?# ünïcode",
        "content": "---\n- [stated] 日本語 😀\r\n\n```\ncode\n```",
        "description": "déjà vu: « quoted » 'single' \"double\"",
        "aliases": ["ñ", "日本", "ñ", "- dash", "null"],
        "sources": ["a", "b"],
        "last_updated": "2025-04-05T06:07:08.123456Z",
        "expires_at": "2999-01-01T00:00:00Z",
    },
    {"area": "notes", "name": "empty", "content": "", "description": "yes"},
    {"area": "notes", "name": "x.md", "content": "no newline at the end"},
]


def tree_of(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


async def seeded(context: AppContext) -> AppContext:
    document = {**ENTITY, "files": FILES}
    await import_memory(ImportMemory.model_validate(document), context)
    return context


def export(root: Path) -> ExportMarkdown:
    return ExportMarkdown(**ENTITY, path=str(root))


def import_(root: Path, **options: Any) -> ImportMarkdown:
    return ImportMarkdown.model_validate({**ENTITY, "path": str(root), **options})


async def test_export_writes_front_matter_then_the_content_exactly(
    tmp_path: Path,
) -> None:
    context = await seeded(make_context())
    stored = await context.storage.get(file_key("user", "alice", "notes", "empty"))
    assert stored is not None

    report = await export_markdown(export(tmp_path), context)

    assert (report.files, report.written, report.unchanged) == (4, 4, 0)
    assert sorted(tree_of(tmp_path)) == [
        "user/notes/café ☕ %2F?# ünïcode.md",
        "user/notes/empty.md",
        "user/notes/x.md.md",
        "user/system/rules.md",
    ]
    assert (tmp_path / "user/notes/empty.md").read_text() == (
        "---\n"
        "description: 'yes'\n"
        "aliases: []\n"
        "sources:\n"
        "- http\n"
        f"last_updated: '{stored.metadata.last_updated.isoformat()[:19]}Z'\n"
        f"version: '{stored.version}'\n"
        "---\n"
    )
    unicode = (tmp_path / "user/notes/café ☕ %2F?# ünïcode.md").read_bytes()
    assert unicode.endswith(
        b"\n---\n---\n- [stated] \xe6\x97\xa5" + "本語 😀\r\n\n```\ncode\n```".encode()
    )
    assert b"expires_at: '2999-01-01T00:00:00Z'\n" in unicode
    assert b"expires_at" not in (tmp_path / "user/notes/empty.md").read_bytes()


async def test_export_purge_import_export_gives_the_same_bytes(
    tmp_path: Path,
) -> None:
    context = await seeded(make_context())
    await export_markdown(export(tmp_path / "first"), context)
    await purge_memory(PurgeMemory(**ENTITY, dry_run=False), context)

    report = await import_markdown(import_(tmp_path / "first"), context)
    await export_markdown(export(tmp_path / "second"), context)

    assert (report.created, report.unchanged, report.files) == (4, 0, 4)
    assert tree_of(tmp_path / "second") == tree_of(tmp_path / "first")


async def test_re_importing_an_unchanged_tree_changes_nothing(tmp_path: Path) -> None:
    context = await seeded(make_context())
    await export_markdown(export(tmp_path), context)
    key = file_key("user", "alice", "notes", "empty")
    before = await context.storage.get(key)
    records = await context.storage.list_versions(key, after=None, limit=100)

    report = await import_markdown(import_(tmp_path), context)

    assert (report.unchanged, report.created, report.overwritten) == (4, 0, 0)
    assert await context.storage.get(key) == before
    assert await context.storage.list_versions(key, after=None, limit=100) == records


async def test_a_second_export_rewrites_nothing(tmp_path: Path) -> None:
    context = await seeded(make_context())
    await export_markdown(export(tmp_path), context)

    again = await export_markdown(export(tmp_path), context)

    assert (again.files, again.written, again.unchanged) == (4, 0, 4)


async def test_dry_run_counts_and_writes_nothing(tmp_path: Path) -> None:
    await export_markdown(export(tmp_path), await seeded(make_context()))
    empty = make_context()

    report = await import_markdown(import_(tmp_path, dry_run=True), empty)

    assert (report.dry_run, report.created) == (True, 4)
    assert await empty.storage.count("user/alice/") == 0


async def test_an_invalid_file_stops_the_import_before_any_write(
    tmp_path: Path,
) -> None:
    await export_markdown(export(tmp_path), await seeded(make_context()))
    (tmp_path / "user/notes/zz broken.md").write_text("no front matter\n")
    empty = make_context()

    with pytest.raises(AppError) as caught:
        await import_markdown(import_(tmp_path), empty)

    assert caught.value.definition is invalid_argument
    assert "notes/zz broken.md does not start with a '---' line" in str(caught.value)
    assert await empty.storage.count("user/alice/") == 0


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\ndescription: a\n", "has no '---' line closing its front matter"),
        ("---\n- a\n---\n", "front matter is not a mapping of fields"),
        ("---\ncolour: red\n---\n", "unknown front matter fields colour"),
        ("---\naliases: 3\n---\n", "aliases: Input should be a valid list"),
        ("---\ndescription: [\n---\n", "front matter is not YAML"),
    ],
)
async def test_a_file_that_is_not_an_export_is_refused_by_name(
    tmp_path: Path, text: str, problem: str
) -> None:
    (tmp_path / "user/notes").mkdir(parents=True)
    (tmp_path / "user/notes/bad.md").write_text(text)

    with pytest.raises(AppError) as caught:
        await import_markdown(import_(tmp_path), make_context())

    assert caught.value.definition is invalid_argument
    assert caught.value.details["argument"] == "path"
    assert f"notes/bad.md {problem}" in str(caught.value)


async def test_other_files_and_editor_folders_are_left_alone(tmp_path: Path) -> None:
    await export_markdown(export(tmp_path), await seeded(make_context()))
    (tmp_path / "user/.obsidian").mkdir()
    (tmp_path / "user/.obsidian/x.md").write_text("settings")
    (tmp_path / "user/notes/picture.png").write_bytes(b"\x89PNG")
    (tmp_path / "user/top.md").write_text("not in an area")

    report = await import_markdown(import_(tmp_path), make_context())

    assert report.created == 4


async def test_mode_fail_writes_nothing_when_a_file_differs(tmp_path: Path) -> None:
    await export_markdown(export(tmp_path), await seeded(make_context()))
    target = make_context()
    other = {"area": "notes", "name": "empty", "content": "other"}
    await import_memory(
        ImportMemory.model_validate({**ENTITY, "files": [other]}), target
    )

    with pytest.raises(AppError) as caught:
        await import_markdown(import_(tmp_path), target)
    skipped = await import_markdown(import_(tmp_path, mode="skip"), target)
    stored = await target.storage.get(file_key("user", "alice", "notes", "empty"))
    replaced = await import_markdown(import_(tmp_path, mode="overwrite"), target)

    assert caught.value.definition is import_conflict
    assert caught.value.details["existing"] == ["notes/empty"]
    assert (skipped.created, skipped.skipped) == (3, 1)
    assert stored is not None and stored.data == b"other"
    assert (replaced.overwritten, replaced.unchanged) == (1, 3)
    overwritten = await target.storage.get(file_key("user", "alice", "notes", "empty"))
    assert overwritten is not None and overwritten.data == b""


async def test_a_conflict_counts_every_differing_file_past_those_it_names(
    tmp_path: Path,
) -> None:
    """Only the first names are listed (memory stays bounded), all are counted."""
    names = [f"n{i:03}" for i in range(105)]

    def files(content: str) -> ImportMemory:
        listed = [{"area": "notes", "name": n, "content": content} for n in names]
        return ImportMemory.model_validate({**ENTITY, "files": listed})

    source, target = make_context(), make_context()
    await import_memory(files("mine"), source)
    await export_markdown(export(tmp_path), source)
    await import_memory(files("theirs"), target)

    with pytest.raises(AppError) as caught:
        await import_markdown(import_(tmp_path), target)

    assert caught.value.definition is import_conflict
    assert caught.value.details["existing_count"] == 105
    assert "105 of the imported files already exist" in str(caught.value)


async def test_a_name_too_long_for_a_file_is_listed_and_the_rest_exported(
    tmp_path: Path,
) -> None:
    long = "a" * 253
    document = {
        **ENTITY,
        "files": [
            {"area": "notes", "name": long, "content": "x"},
            {"area": "notes", "name": "b", "content": "y"},
        ],
    }
    context = make_context()
    await import_memory(ImportMemory.model_validate(document), context)

    report = await export_markdown(export(tmp_path), context)

    assert (report.files, report.unnamed) == (1, [f"notes/{long}"])
    assert sorted(tree_of(tmp_path)) == ["user/notes/b.md"]


async def test_a_report_names_the_first_hundred_unnamed_files_only(
    tmp_path: Path,
) -> None:
    """Every one is counted out of the export; the report stays bounded."""
    names = [f"{i:03}" + "a" * 250 for i in range(101)]
    listed = [{"area": "notes", "name": n, "content": "x"} for n in names]
    context = make_context()
    await import_memory(
        ImportMemory.model_validate({**ENTITY, "files": listed}), context
    )

    report = await export_markdown(export(tmp_path), context)

    assert report.files == 0
    assert report.unnamed == [f"notes/{name}" for name in names[:100]]
