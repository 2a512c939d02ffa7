"""import_memory's history records: checked as writes, replayed as they were."""

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits, file_key
from app.features.memory.schemas import ImportMemory, ListVersions, ReadVersion
from app.features.memory.use_cases.import_memory import import_memory
from app.features.memory.use_cases.list_versions import list_versions
from app.features.memory.use_cases.read_version import read_version
from app.shared.errors import oversize_write

from .conftest import LOCATION, make_context, snapshot


def request(record_content: str) -> ImportMemory:
    record = {
        "version": "1",
        "operation": "write_file",
        "actor": "desktop",
        "at": "2026-01-01T00:00:00Z",
        "content": record_content,
    }
    return ImportMemory.model_validate(
        {
            "scope": "user",
            "entity_id": "alice",
            "files": [{"area": "notes", "name": "tea", "content": "now\n"}],
            "history": [{"area": "notes", "name": "tea", "records": [record]}],
        }
    )


async def test_a_record_without_a_description_is_replayed_without_one() -> None:
    context = make_context()

    await import_memory(request("then\n"), context)

    listed = await list_versions(ListVersions(**LOCATION), context)
    oldest = listed.entries[-1]
    old = await read_version(ReadVersion(**LOCATION, version=oldest.version), context)
    assert (old.file.content, old.file.description) == ("then\n", "")


async def test_a_record_over_the_size_limit_is_refused_naming_its_file() -> None:
    context = make_context(limits=MemoryLimits(max_file_bytes=8))

    with pytest.raises(AppError) as raised:
        await import_memory(request("far too long\n"), context)

    assert raised.value.definition is oversize_write
    assert (raised.value.details["area"], raised.value.details["name"]) == (
        "notes",
        "tea",
    )
    assert await snapshot(context.storage) == []


async def test_an_import_s_writes_are_recorded_as_the_import_by_its_surface() -> None:
    """Each file the import writes gets a version record naming the task and
    the surface that ran it, as every other write's record does."""
    context = make_context(surface="task")
    files = [{"area": "notes", "name": "tea", "content": "now\n"}]
    plain = ImportMemory.model_validate(
        {"scope": "user", "entity_id": "alice", "files": files}
    )

    await import_memory(plain, context)

    key = file_key("user", "alice", "notes", "tea")
    (record,) = await context.storage.list_versions(key, after=None, limit=10)
    assert (record.operation, record.actor) == ("memory.import", "task")
