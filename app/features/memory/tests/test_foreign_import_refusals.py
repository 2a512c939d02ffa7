"""What the importers refuse, before writing anything: malformed samples (named
by file and line), clashing names, oversize bodies, unreadable paths, bad areas."""

from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import ImportMcpMemory
from app.features.memory.use_cases.import_basic_memory import import_basic_memory
from app.features.memory.use_cases.import_mcp_memory import import_mcp_memory
from app.infra.memory.storage import MemoryStorage
from app.shared.errors import invalid_argument, oversize_write

from .conftest import make_context, snapshot
from .foreign_samples import ENTITY, MCP, PROJECT, SAMPLES, basic, mcp

MALFORMED = sorted((SAMPLES / "mcp-memory" / "malformed").iterdir()) + sorted(
    (SAMPLES / "basic-memory" / "malformed").iterdir()
)
LINES = {
    "duplicate-entity.json": 2,
    "name-with-slash.json": 2,
    "observations-not-a-list.json": 1,
    "truncated-line.json": 2,
    "unknown-entity.json": 2,
    "unknown-type.json": 3,
    "bad-yaml.md": 4,
    "not-utf8.md": 5,
    "tags-mapping.md": 4,
    "title-with-slash.md": 2,
    "unclosed-front-matter.md": 1,
}


@pytest.mark.parametrize("path", MALFORMED, ids=[p.name for p in MALFORMED])
async def test_a_malformed_sample_is_refused_naming_its_line(path: Path) -> None:
    context = make_context(surface="task")

    with pytest.raises(AppError) as raised:
        if path.suffix == ".json":
            await import_mcp_memory(mcp(path), context)
        else:
            await import_basic_memory(basic(path), context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "path"
    assert f"{path.name} line {LINES[path.name]}:" in raised.value.message
    assert await snapshot(context.storage) == []


async def test_a_bad_note_in_a_folder_stops_the_whole_folder(tmp_path: Path) -> None:
    for note in PROJECT.rglob("*.md"):
        target = tmp_path / note.relative_to(PROJECT)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(note.read_bytes())
    broken = SAMPLES / "basic-memory" / "malformed" / "bad-yaml.md"
    (tmp_path / "zz-broken.md").write_bytes(broken.read_bytes())
    context = make_context(surface="task")

    with pytest.raises(AppError) as raised:
        await import_basic_memory(basic(tmp_path), context)

    assert "zz-broken.md line 4:" in raised.value.message
    assert await snapshot(context.storage) == []


async def test_two_notes_with_one_title_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\ntitle: Tea\n---\n- [x1] one\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "Tea.md").write_text("- [x2] two\n")
    context = make_context(surface="task")

    with pytest.raises(AppError) as raised:
        await import_basic_memory(basic(tmp_path), context)

    assert "b/Tea.md and a.md line 2 both become the file 'Tea'" in str(raised.value)
    assert await snapshot(context.storage) == []


async def test_an_entity_over_the_size_limit_is_refused_before_any_write(
    tmp_path: Path,
) -> None:
    source = tmp_path / "memory.json"
    big = '{"type":"entity","name":"big","entityType":"x","observations":["%s"]}'
    source.write_text(MCP.read_text() + big % ("y" * 20_000) + "\n")
    context = make_context(surface="task")

    with pytest.raises(AppError) as raised:
        await import_mcp_memory(mcp(source), context)

    assert raised.value.definition is oversize_write
    assert await snapshot(context.storage) == []


@pytest.mark.parametrize("path", ["/nonexistent/memory.json", "."])
async def test_a_path_that_is_not_a_readable_file_is_refused(path: str) -> None:
    context = make_context(surface="task", storage=MemoryStorage())

    with pytest.raises(AppError) as raised:
        await import_mcp_memory(
            ImportMcpMemory.model_validate(ENTITY | {"path": path}), context
        )

    assert raised.value.details["argument"] == "path"


async def test_an_area_that_is_not_a_slug_is_refused() -> None:
    context = make_context(surface="task")

    with pytest.raises(AppError) as raised:
        await import_mcp_memory(mcp(area="Knowledge"), context)

    assert raised.value.details["argument"] == "area"
    assert await snapshot(context.storage) == []
