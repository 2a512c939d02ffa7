"""Edges of the transfers' pure parts: front matter, basic-memory notes, an
import's checks, a source path and listing in batches."""

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.domain.basic_memory import parse_basic_memory
from app.features.memory.domain.foreign_notes import MalformedSource
from app.features.memory.domain.front_matter import (
    FrontMatterError,
    file_name,
    parse,
    render,
)
from app.features.memory.policy.imports import checked_restores
from app.features.memory.ports.source_files import read_source
from app.features.memory.ports.storage_reads import list_batches
from app.features.memory.schemas import (
    ExportedRecord,
    FileHistory,
    ImportedFile,
    ImportMemory,
)
from app.features.memory.use_cases.import_mcp_memory import import_mcp_memory
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.storage import MemoryStorage

from .conftest import make_context
from .foreign_samples import mcp
from .requests import write_request

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_render_keeps_field_order_unicode_and_long_lines() -> None:
    long = "word " * 40
    rendered = render({"title": "é", "description": long, "aliases": ["a"]}, b"x")

    assert (
        rendered
        == (
            "---\ntitle: é\ndescription: '" + long + "'\naliases:\n- a\n---\nx"
        ).encode()
    )


def test_empty_front_matter_is_no_mapping() -> None:
    with pytest.raises(FrontMatterError, match="not a mapping"):
        parse(b"---\n---\nbody")


def test_a_name_fills_a_file_name_to_its_last_byte() -> None:
    assert file_name("n" * 252) == "n" * 252 + ".md"
    assert file_name("n" * 253) is None


@pytest.mark.parametrize("first", ["--- ", "---X"])
def test_only_a_bare_fence_opens_front_matter(first: str) -> None:
    text = f"{first}\ntitle: T\n"
    (note,) = parse_basic_memory(text, "dir/A.md")

    assert (note.name, note.content) == ("A", text)


@pytest.mark.parametrize("last", ["--- ", "---X"])
def test_a_fence_with_trailing_characters_does_not_close_it(last: str) -> None:
    with pytest.raises(MalformedSource) as raised:
        parse_basic_memory(f"---\ntitle: T\n{last}\nbody\n", "A.md")

    assert raised.value.origin == "A.md line 1"
    assert raised.value.detail == "front matter opened here is never closed"


def test_the_body_keeps_its_first_letters() -> None:
    (note,) = parse_basic_memory("---\ntitle: T\n---\nXylophone\n", "A.md")

    assert note.content == "Xylophone\n"


def test_a_front_matter_yaml_cannot_read_is_named_at_its_first_line() -> None:
    with pytest.raises(MalformedSource) as raised:
        parse_basic_memory("---\ntitle: a\x07b\n---\n", "A.md")

    assert raised.value.origin == "A.md line 2"
    assert raised.value.detail.startswith("front matter is not YAML: ")


def test_a_bad_field_without_a_plain_key_line_is_named_at_line_two() -> None:
    with pytest.raises(MalformedSource) as raised:
        parse_basic_memory('---\ntype: t\n"title": [a, b]\n---\n', "A.md")

    assert raised.value.origin == "A.md line 2"


def test_the_origin_is_the_title_line() -> None:
    (note,) = parse_basic_memory("---\ntype: t\ntitle: T\n---\n", "A.md")

    assert note.origin == "A.md line 3"


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's local time far from UTC."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def refusal(error: AppError) -> tuple[str, str]:
    return error.details["argument"], str(error).split(". ")[0]


def imported(**fields: object) -> ImportMemory:
    return ImportMemory.model_validate({"scope": "user", "entity_id": "u", **fields})


def test_a_file_listed_twice_is_refused_by_files() -> None:
    item = ImportedFile(area="notes", name="a", content="x")
    with pytest.raises(AppError) as raised:
        checked_restores(
            imported(files=[item, item]), max_file_bytes=100, source="s", now=NOW
        )

    argument, sentence = refusal(raised.value)
    assert argument == "files"
    assert sentence.endswith("appears twice; list each file once")


def test_history_without_its_file_is_refused_by_history() -> None:
    record = ExportedRecord(version="v1", operation="write_file", actor="s", at=NOW)
    history = FileHistory(area="notes", name="b", records=[record])
    with pytest.raises(AppError) as raised:
        checked_restores(
            imported(files=[], history=[history]),
            max_file_bytes=100,
            source="s",
            now=NOW,
        )

    assert refusal(raised.value) == (
        "history",
        "Argument history is invalid: notes/b has history but is not in files",
    )


@pytest.mark.usefixtures("tokyo")
def test_an_import_stores_its_moments_in_utc() -> None:
    local = NOW.astimezone(UTC).replace(tzinfo=None).astimezone()
    item = ImportedFile(
        area="notes", name="a", content="x", last_updated=local, expires_at=local
    )
    record = ExportedRecord(version="v1", operation="write_file", actor="s", at=local)
    history = FileHistory(area="notes", name="a", records=[record])

    (restore,) = checked_restores(
        imported(files=[item], history=[history]),
        max_file_bytes=100,
        source="s",
        now=NOW,
    )

    moments = [restore.metadata.last_updated, restore.metadata.expires_at]
    moments += [r.metadata.last_updated for r in restore.history]
    assert [m and m.utcoffset() for m in moments] == [timedelta(0)] * 3


@pytest.mark.usefixtures("tokyo")
async def test_a_foreign_import_stores_its_moment_in_utc() -> None:
    context = make_context(surface="task")

    await import_mcp_memory(mcp(), context)

    listed = await context.storage.list_page("user/alice/", start_after=None, limit=9)
    stored = [await context.storage.get(item.key) for item in listed]
    moments = [s.metadata.last_updated.utcoffset() for s in stored if s]
    assert moments == [timedelta(0)] * 4


async def test_a_folder_is_no_source_file(tmp_path: Path) -> None:
    with pytest.raises(AppError) as raised:
        await read_source(str(tmp_path))

    assert refusal(raised.value) == (
        "path",
        f"Argument path is invalid: {str(tmp_path)!r} is not a readable file",
    )


def unreadable(tmp_path: Path) -> tuple[Path, str]:
    """A file the system refuses to read, and why: one without permissions, or
    for root (whom permissions do not stop) Linux's memory file of the process."""
    if os.geteuid() != 0:
        path = tmp_path / "locked.md"
        path.write_text("- [stated] x\n")
        path.chmod(0)
        return path, "Permission denied"
    path = Path("/proc/self/mem")
    if not path.is_file():
        pytest.skip("no file here refuses root")
    return path, "Input/output error"


async def test_a_file_that_cannot_be_read_is_refused_saying_why(
    tmp_path: Path,
) -> None:
    path, reason = unreadable(tmp_path)

    with pytest.raises(AppError) as raised:
        await read_source(str(path))

    assert refusal(raised.value) == (
        "path",
        f"Argument path is invalid: {str(path)!r} cannot be read ({reason})",
    )


async def test_batches_resume_after_the_last_key() -> None:
    storage = MemoryStorage()
    context = make_context(storage=storage)
    for name in "abcde":
        await write_file(write_request(name=name), context)

    batches = [
        [item.key.rsplit("/", 1)[1] for item in batch]
        async for batch in list_batches(storage, "", batch=2)
    ]

    assert batches == [["a.md", "b.md"], ["c.md", "d.md"], ["e.md"]]
