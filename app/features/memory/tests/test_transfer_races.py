"""The exports (markdown, JSON) and the archive over storage that holds more than
files: a key under the entity that is no file's, and a file another agent deletes
between the listing and its read. Both are left out, and every file after them
still goes."""

from datetime import UTC, datetime
from pathlib import Path

from app.features.memory.domain import file_key
from app.features.memory.ports import FileMetadata, Write
from app.features.memory.schemas import (
    DeleteFile,
    ExportMarkdown,
    ExportMemory,
    ReadFile,
    ReadMarkdownArchive,
)
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.export_markdown import export_markdown
from app.features.memory.use_cases.export_memory import export_memory
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.read_markdown_archive import (
    read_markdown_archive,
)
from app.server.context import AppContext

from .conftest import create, make_context
from .scripted_storage import ScriptedStorage

FOREIGN = "user/alice/notes/readme.txt"
"""An object another tool left under the entity's prefix: not a file's key."""


async def seeded() -> tuple[ScriptedStorage, AppContext]:
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    for name in ("a", "b", "c"):
        await create(context, f"- [stated] {name}.\n", name=name)
    metadata = FileMetadata("", (), ("http",), datetime(2026, 3, 1, tzinfo=UTC))
    await storage.inner.put(Write(FOREIGN, b"not a memory", metadata))
    return storage, context


async def delete_after_listing(storage: ScriptedStorage, context: AppContext) -> None:
    """Another agent deletes notes/a once the next page has been listed."""
    read = ReadFile(scope="user", area="notes", name="a")
    version = (await read_file(read, context)).version

    async def delete() -> None:
        request = DeleteFile(
            scope="user", area="notes", name="a", expected_version=version
        )
        await delete_file(request, context)

    storage.after_lists = [delete]


def tree_of(root: Path) -> list[str]:
    return sorted(
        str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()
    )


async def test_the_export_leaves_out_what_is_no_file_and_goes_on(
    tmp_path: Path,
) -> None:
    storage, context = await seeded()
    await delete_after_listing(storage, context)
    request = ExportMarkdown(scope="user", entity_id="alice", path=str(tmp_path))

    report = await export_markdown(request, context)

    assert (report.files, report.written, report.unnamed) == (2, 2, [])
    assert tree_of(tmp_path) == ["user/notes/b.md", "user/notes/c.md"]
    assert storage.after_lists == []


async def test_the_archive_leaves_out_what_is_no_file_and_goes_on() -> None:
    storage, context = await seeded()
    await delete_after_listing(storage, context)

    files = await read_markdown_archive(ReadMarkdownArchive(scope="user"), context)
    paths = [file.path async for file in files]

    assert paths == ["user/notes/b.md", "user/notes/c.md"]
    assert storage.after_lists == []
    assert await storage.inner.get(file_key("user", "alice", "notes", "a")) is None


async def test_the_json_export_leaves_out_what_is_no_file_and_goes_on() -> None:
    storage, context = await seeded()
    await delete_after_listing(storage, context)
    request = ExportMemory(scope="user", entity_id="alice", include_history=True)

    export = await export_memory(request, context)

    assert [(f.area, f.name) for f in export.files] == [("notes", "b"), ("notes", "c")]
    assert export.history is not None
    assert [h.name for h in export.history] == ["b", "c"]
    assert storage.after_lists == []
