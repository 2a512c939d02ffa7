"""Operator tasks: memory.export, memory.import and memory.invalidate_index.

Use cases run on contexts composed exactly as ``app.server.tasks`` composes them
(``create_lifespan(settings, surface="task")``); the runner and the ``tenchi``
command are exercised at the end.
"""

import json
import subprocess
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tenchi.errors import AppError
from tenchi.tasks import TaskInputError

from app.features.memory.domain import file_key
from app.features.memory.ports import FileMetadata, Write
from app.features.memory.schemas import (
    AppendLine,
    ExportMemory,
    GetMemoryIndex,
    ImportMemory,
    MemoryExport,
    ReadFile,
    WriteFile,
)
from app.features.memory.tasks import tasks
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.export_memory import export_memory
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.import_memory import import_memory
from app.features.memory.use_cases.invalidate_index import invalidate_index
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext
from app.server.runtime import create_lifespan
from app.server.settings import Settings
from app.server.tasks import build_task_runner
from app.shared.errors import (
    import_conflict,
    invalid_argument,
    oversize_write,
    restricted_scope,
)
from app.shared.identity import Grant, Identity
from tests.support.server import clean_env
from tests.support.storage_adapters import ADAPTERS, storage_url

ALICE = Identity(grants={"user": Grant("alice", "owner")}, label="desktop")
ENTITY = ExportMemory(scope="user", entity_id="alice")
WHEN = "2025-04-05T06:07:08.123456Z"
REPOSITORY = Path(__file__).resolve().parents[1]


def settings_for(url: str, root: Path) -> Settings:
    return Settings(
        storage=url,
        tokens_file=str(root / "tokens.json"),
        cursor_secret="task-tests-cursor-secret",
        max_file_bytes=1024,
    )


@asynccontextmanager
async def task_context(url: str, root: Path) -> AsyncGenerator[AppContext]:
    """A context as ``tenchi task run`` builds it (surface ``task``, no identity)."""
    async with create_lifespan(settings_for(url, root), surface="task")() as runtime:
        yield runtime.context


def as_alice(context: AppContext) -> AppContext:
    return replace(context, identity=ALICE, surface="http")


def document(*files: dict[str, Any], mode: str = "fail") -> ImportMemory:
    return ImportMemory.model_validate(
        {"scope": "user", "entity_id": "alice", "files": list(files), "mode": mode}
    )


async def write(context: AppContext, name: str, content: str) -> None:
    request = WriteFile(
        scope="user",
        area="notes",
        name=name,
        content=content,
        description=f"about {name}",
        aliases=["x", "x"],
        expected_version=None,
    )
    await write_file(request, as_alice(context))


@pytest.fixture
async def context(tmp_path: Path) -> AsyncGenerator[AppContext]:
    async with task_context("memory://", tmp_path) as context:
        yield context


def test_every_task_is_named_and_described() -> None:
    """The operator tasks are declared, each with a description."""
    names = [item.name for item in tasks]

    assert names == [
        "memory.export",
        "memory.import",
        "memory.import_mcp_memory",
        "memory.import_basic_memory",
        "memory.purge",
        "memory.invalidate_index",
        "memory.export_markdown",
        "memory.import_markdown",
        "memory.sweep_expired",
    ]
    assert all(item.description for item in tasks)


async def test_export_returns_every_file_with_its_metadata(
    context: AppContext,
) -> None:
    """Content, description, aliases, sources, timestamp and version, by key."""
    await write(context, "tea", "- [stated] Likes tea.")
    await write(context, "coffee", "")
    tea = await read_file(
        ReadFile(scope="user", area="notes", name="tea"), as_alice(context)
    )

    exported = await export_memory(ENTITY, context)

    assert [(f.area, f.name) for f in exported.files] == [
        ("notes", "coffee"),
        ("notes", "tea"),
    ]
    assert exported.files[1].model_dump() == {
        "area": "notes",
        "name": "tea",
        "content": "- [stated] Likes tea.",
        "description": "about tea",
        "aliases": ["x", "x"],
        "sources": ["desktop"],
        "last_updated": tea.last_updated,
        "version": tea.version,
    }
    assert (exported.scope, exported.entity_id) == ("user", "alice")


async def test_export_covers_only_the_named_entity(context: AppContext) -> None:
    """Neighbouring entities (``alice2``) and other scopes are not exported."""
    metadata = FileMetadata("", (), ("task",), datetime(2025, 1, 1, tzinfo=UTC))
    for key in ("user/alice2/notes/a.md", "team/alice/notes/a.md"):
        await context.storage.put(Write(key, b"- [stated] other\n", metadata))

    exported = await export_memory(ENTITY, context)

    assert exported.files == []


async def test_export_pages_through_several_list_batches(
    context: AppContext,
) -> None:
    """More files than one list batch are all exported, in key order."""
    metadata = FileMetadata("", (), ("task",), datetime(2025, 1, 1, tzinfo=UTC))
    names = [f"n{i:05d}" for i in range(2_050)]
    for name in names:
        await context.storage.put(
            Write(file_key("user", "alice", "bulk", name), name.encode(), metadata)
        )

    exported = await export_memory(ENTITY, context)

    assert [f.name for f in exported.files] == names
    assert [f.content for f in exported.files] == names


async def test_import_restores_content_and_metadata_exactly(
    context: AppContext,
) -> None:
    """Description, aliases (with duplicates), sources and last_updated as given."""
    restored = document(
        {
            "area": "notes",
            "name": "tea ☕",
            "content": "- [stated] a\r\nno newline",
            "description": "drinks",
            "aliases": ["b", "a", "b"],
            "sources": ["mcp", "claude-desktop"],
            "last_updated": WHEN,
            "version": "ignored",
        }
    )

    report = await import_memory(restored, context)
    read = await read_file(
        ReadFile(scope="user", area="notes", name="tea ☕"), as_alice(context)
    )

    assert [f.name for f in report.created] == ["tea ☕"]
    assert read.content == "- [stated] a\r\nno newline"
    assert (read.description, read.aliases) == ("drinks", ["b", "a", "b"])
    assert (read.sources, read.last_updated) == (["claude-desktop", "mcp"], WHEN)
    assert read.version != "ignored"


async def test_import_without_sources_records_the_task(context: AppContext) -> None:
    """A file given no sources is written by source ``task`` at the clock's time."""
    before = datetime.now(UTC)

    await import_memory(
        document({"area": "notes", "name": "a", "content": ""}), context
    )

    (file,) = (await export_memory(ENTITY, context)).files
    assert file.sources == ["task"]
    assert (file.description, file.aliases) == ("", [])
    assert datetime.fromisoformat(file.last_updated) >= before


async def test_import_in_fail_mode_writes_nothing_if_a_file_exists(
    context: AppContext,
) -> None:
    """mode fail reports the existing files and leaves the entity unchanged."""
    await write(context, "tea", "- [stated] old\n")
    before = await export_memory(ENTITY, context)
    restored = document(
        {"area": "notes", "name": "new", "content": "x"},
        {"area": "notes", "name": "tea", "content": "y"},
    )

    with pytest.raises(AppError) as raised:
        await import_memory(restored, context)

    assert raised.value.definition is import_conflict
    assert raised.value.details["existing"] == ["notes/tea"]
    assert await export_memory(ENTITY, context) == before


async def test_import_in_skip_mode_keeps_existing_files(context: AppContext) -> None:
    """mode skip creates what is missing and leaves existing files alone."""
    await write(context, "tea", "- [stated] old\n")
    restored = document(
        {"area": "notes", "name": "new", "content": "x"},
        {"area": "notes", "name": "tea", "content": "y"},
        mode="skip",
    )

    report = await import_memory(restored, context)

    contents = {f.name: f.content for f in (await export_memory(ENTITY, context)).files}
    assert contents == {"new": "x", "tea": "- [stated] old\n"}
    assert ([f.name for f in report.created], [f.name for f in report.skipped]) == (
        ["new"],
        ["tea"],
    )


async def test_import_in_overwrite_mode_replaces_with_new_versions(
    context: AppContext,
) -> None:
    """mode overwrite replaces existing files, content and metadata, new version."""
    await write(context, "tea", "- [stated] old\n")
    (old,) = (await export_memory(ENTITY, context)).files
    restored = document(
        {"area": "notes", "name": "tea", "content": "y", "sources": ["seed"]},
        mode="overwrite",
    )

    report = await import_memory(restored, context)

    (new,) = (await export_memory(ENTITY, context)).files
    assert [f.name for f in report.overwritten] == ["tea"]
    assert (new.content, new.sources, new.aliases) == ("y", ["seed"], [])
    assert new.version != old.version


@pytest.mark.parametrize(
    ("bad", "definition"),
    [
        ({"area": "Notes", "name": "b", "content": ""}, invalid_argument),
        ({"area": "notes", "name": "..", "content": ""}, invalid_argument),
        ({"area": "notes", "name": "a", "content": ""}, invalid_argument),
        (
            {"area": "notes", "name": "b", "content": "", "description": "a\nb"},
            invalid_argument,
        ),
        ({"area": "notes", "name": "b", "content": "x" * 1025}, oversize_write),
        (
            {"area": "notes", "name": "b", "content": "", "aliases": ["a" * 500] * 13},
            invalid_argument,
        ),
    ],
    ids=["area", "name", "duplicate", "description", "oversize", "metadata"],
)
async def test_import_checks_every_file_before_writing(
    context: AppContext, bad: dict[str, Any], definition: object
) -> None:
    """One bad file (even the last) means nothing is written."""
    restored = document({"area": "notes", "name": "a", "content": ""}, bad)

    with pytest.raises(AppError) as raised:
        await import_memory(restored, context)

    assert raised.value.definition is definition
    assert (await export_memory(ENTITY, context)).files == []


async def test_import_seeds_a_system_area_readers_cannot_write(
    context: AppContext,
) -> None:
    """Imported system/ files are readable through the surfaces, never writable."""
    seeded = {"area": "system", "name": "rules", "content": "- [system] Be kind.\n"}
    await import_memory(document(seeded), context)
    alice = as_alice(context)
    rules = await read_file(ReadFile(scope="user", area="system", name="rules"), alice)

    with pytest.raises(AppError) as raised:
        await append_line(
            AppendLine(
                scope="user",
                area="system",
                name="rules",
                line="- [stated] no",
                expected_version=rules.version,
            ),
            alice,
        )

    assert rules.content == "- [system] Be kind.\n"
    assert raised.value.definition is restricted_scope


async def test_import_and_invalidate_index_refresh_a_cached_index(
    context: AppContext,
) -> None:
    """import drops the entity's cached listing; so does memory.invalidate_index."""
    alice = as_alice(context)
    assert (await get_memory_index(GetMemoryIndex(), alice)).entries == []
    await import_memory(
        document({"area": "notes", "name": "a", "content": ""}), context
    )
    listed = await get_memory_index(GetMemoryIndex(), alice)
    metadata = FileMetadata("", (), ("task",), datetime(2025, 1, 1, tzinfo=UTC))
    await context.storage.put(
        Write(file_key("user", "alice", "notes", "b"), b"", metadata)
    )
    stale = await get_memory_index(GetMemoryIndex(), alice)

    result = await invalidate_index(ENTITY, context)

    fresh = await get_memory_index(GetMemoryIndex(), alice)
    assert [e.name for e in listed.entries] == [e.name for e in stale.entries] == ["a"]
    assert sorted(e.name for e in fresh.entries) == ["a", "b"]
    assert (result.scope, result.entity_id) == ("user", "alice")


async def seed_everything(context: AppContext) -> None:
    """Files that stress losslessness: unicode, CRLF, empty, system, many sources."""
    await import_memory(
        document(
            {"area": "system", "name": "rules", "content": "- [system] Be kind.\n"},
            {
                "area": "notes",
                "name": "café ☕ %2F?#",
                "content": "- [stated] 日本語 😀\r\n\n```\ncode\n```",
                "description": "déjà vu",
                "aliases": ["ñ", "日本", "ñ"],
                "sources": ["a", "b", "c"],
                "last_updated": WHEN,
            },
            {
                "area": "notes",
                "name": "round",
                "content": "",
                "last_updated": "2025-01-01T00:00:00Z",
            },
        ),
        context,
    )
    await write(context, "tea", "- [stated] Likes tea.")
    tea = await read_file(
        ReadFile(scope="user", area="notes", name="tea"), as_alice(context)
    )
    await append_line(
        AppendLine(
            scope="user",
            area="notes",
            name="tea",
            line="- [observed] Every day.",
            expected_version=tea.version,
            aliases=["chai"],
        ),
        as_alice(context),
    )


def without_versions(exported: MemoryExport) -> list[dict[str, Any]]:
    return [f.model_dump(exclude={"version"}) for f in exported.files]


@pytest.mark.parametrize(
    ("source", "target"),
    [(kind, ADAPTERS[(i + 1) % len(ADAPTERS)]) for i, kind in enumerate(ADAPTERS)],
)
async def test_export_then_import_moves_an_entity_between_backends_byte_for_byte(
    request: pytest.FixtureRequest, tmp_path: Path, source: str, target: str
) -> None:
    """Every body byte and every metadata field survives; only versions change."""
    if "gcs" in (source, target):
        request.getfixturevalue("gcs_emulator")
    async with (
        task_context(storage_url(source, tmp_path / "a"), tmp_path / "a") as origin,
        task_context(storage_url(target, tmp_path / "b"), tmp_path / "b") as copy,
    ):
        await seed_everything(origin)
        exported = await export_memory(ENTITY, origin)

        moved = ImportMemory.model_validate(exported.model_dump() | {"mode": "fail"})
        report = await import_memory(moved, copy)

        assert len(report.created) == len(exported.files) == 4
        assert without_versions(await export_memory(ENTITY, copy)) == without_versions(
            exported
        )
        for file in exported.files:
            key = file_key("user", "alice", file.area, file.name)
            before, after = await origin.storage.get(key), await copy.storage.get(key)
            assert before is not None and after is not None
            assert (after.data, after.metadata) == (before.data, before.metadata)


async def test_runner_runs_tasks_on_the_configured_storage(tmp_path: Path) -> None:
    """The composed runner validates input and runs tasks against its settings."""
    runner = build_task_runner(settings_for(f"sqlite:///{tmp_path / 'w.db'}", tmp_path))
    seeded = {"area": "notes", "name": "a", "content": "- [stated] a\n"}

    await runner.run("memory.import", input_json=document(seeded).model_dump_json())
    exported = await runner.run("memory.export", input=ENTITY)

    assert isinstance(exported, MemoryExport)
    assert [(f.name, f.sources) for f in exported.files] == [("a", ["task"])]


@pytest.mark.parametrize("entity_id", ["", "a/b", ".."])
async def test_task_input_names_a_valid_entity(tmp_path: Path, entity_id: str) -> None:
    """scope and entity_id must be storage-key segments; checked before storage."""
    runner = build_task_runner(settings_for("memory://", tmp_path))

    with pytest.raises(TaskInputError):
        await runner.run(
            "memory.purge",
            input_json=json.dumps({"scope": "user", "entity_id": entity_id}),
        )


def tenchi_task(root: Path, storage: str, name: str, payload: object) -> Any:
    """``tenchi task run NAME --json`` in a fresh process; its parsed output."""
    completed = subprocess.run(
        [
            str(Path(sys.executable).parent / "tenchi"),
            "task",
            "run",
            name,
            "--input",
            json.dumps(payload),
            "--json",
        ],
        cwd=REPOSITORY,
        env=clean_env(
            {
                "WENCHANG_STORAGE": storage,
                "WENCHANG_TOKENS_FILE": str(root / "tokens.json"),
            }
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(completed.stdout)["output"]


async def test_tenchi_task_run_moves_an_entity_from_sqlite_to_files(
    tmp_path: Path,
) -> None:
    """The operator flow: export as JSON from one backend, import into another."""
    sqlite, files = f"sqlite:///{tmp_path / 'w.db'}", f"file://{tmp_path / 'files'}"
    async with task_context(sqlite, tmp_path) as origin:
        await seed_everything(origin)
        before = without_versions(await export_memory(ENTITY, origin))

    exported = tenchi_task(tmp_path, sqlite, "memory.export", ENTITY.model_dump())
    report = tenchi_task(tmp_path, files, "memory.import", exported | {"mode": "fail"})

    async with task_context(files, tmp_path) as copy:
        after = without_versions(await export_memory(ENTITY, copy))
    assert len(report["created"]) == len(before) == 4
    assert after == before


async def test_history_moves_with_export_and_import(tmp_path: Path) -> None:
    """include_history exports every record; importing it elsewhere replays them
    (same operations, actors, times and contents; new versions)."""
    async with task_context(f"sqlite:///{tmp_path / 'a.db'}", tmp_path) as source:
        await write(source, "tea", "- [stated] one\n")
        tea = await read_file(
            ReadFile(scope="user", area="notes", name="tea"), as_alice(source)
        )
        await write_file(
            WriteFile(
                scope="user",
                area="notes",
                name="tea",
                content="- [stated] two\n",
                description="about tea",
                aliases=[],
                expected_version=tea.version,
            ),
            as_alice(source),
        )
        exported = await export_memory(
            ExportMemory(scope="user", entity_id="alice", include_history=True), source
        )
        plain = await export_memory(ENTITY, source)
    assert exported.history is not None and plain.history is None
    (tea_history,) = exported.history
    assert [r.content for r in tea_history.records] == [
        "- [stated] two\n",
        "- [stated] one\n",
    ]

    async with task_context("memory://", tmp_path) as target:
        document = ImportMemory.model_validate(
            exported.model_dump(mode="json") | {"entity_id": "alice", "mode": "fail"}
        )
        report = await import_memory(document, target)
        again = await export_memory(
            ExportMemory(scope="user", entity_id="alice", include_history=True), target
        )

    assert [f.name for f in report.created] == ["tea"]
    assert again.history is not None
    (moved,) = again.history

    def shape(history: Any) -> list[tuple[object, ...]]:
        return [
            (r.operation, r.actor, r.at, r.content, r.description, r.deleted)
            for r in history.records
        ]

    assert shape(moved) == shape(tea_history)
    assert [f.content for f in again.files] == ["- [stated] two\n"]


@pytest.mark.parametrize(
    "moment", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"]
)
@pytest.mark.parametrize("field", ["last_updated", "at"])
async def test_an_import_time_beyond_utc_is_bad_input(
    tmp_path: Path, moment: str, field: str
) -> None:
    """A time whose offset takes it past UTC's years is refused; nothing written."""
    runner = build_task_runner(settings_for(f"sqlite:///{tmp_path / 'w.db'}", tmp_path))
    seeded: dict[str, Any] = {"area": "notes", "name": "a", "content": "x\n"}
    payload = json.loads(document(seeded).model_dump_json())
    record = {"version": "v1", "operation": "write_file", "actor": "http"}
    if field == "at":
        records = [record | {"at": moment, "content": "x\n"}]
        payload["history"] = [{"area": "notes", "name": "a", "records": records}]
    else:
        payload["files"][0]["last_updated"] = moment

    with pytest.raises(TaskInputError):
        await runner.run("memory.import", input_json=json.dumps(payload))
    exported = await runner.run("memory.export", input=ENTITY)

    assert isinstance(exported, MemoryExport)
    assert exported.files == []
