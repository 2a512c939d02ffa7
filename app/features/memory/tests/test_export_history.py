"""export_memory with include_history: every record, past one page of history."""

from datetime import timedelta

from app.features.memory.domain import file_key
from app.features.memory.ports import Change, FileMetadata, HistoryRetention, Write
from app.features.memory.schemas import ExportMemory
from app.features.memory.use_cases.export_memory import HISTORY_PAGE, export_memory
from app.infra.memory.storage import MemoryStorage

from .conftest import START, make_context


async def test_a_history_longer_than_a_page_is_exported_whole_newest_first() -> None:
    retention = HistoryRetention(max_versions=HISTORY_PAGE + 10, max_days=0)
    storage = MemoryStorage(retention=retention)
    key = file_key("user", "alice", "notes", "tea")
    versions: list[str] = []
    for i in range(HISTORY_PAGE + 2):
        at = START + timedelta(seconds=i)
        metadata = FileMetadata("", (), ("http",), at)
        change = Change("write_file", "http", at)
        versions.append(await storage.put(Write(key, b"%d" % i, metadata, change)))
    context = make_context(storage=storage)

    exported = await export_memory(
        ExportMemory(scope="user", entity_id="alice", include_history=True), context
    )

    assert exported.history is not None
    [history] = exported.history
    assert [record.version for record in history.records] == versions[::-1]
