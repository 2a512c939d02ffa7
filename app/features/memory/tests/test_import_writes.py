"""How an import writes a checked file: its records replayed, then its body."""

from datetime import UTC, datetime, timedelta

from app.features.memory.domain.keys import address_of
from app.features.memory.ports import Change, FileMetadata
from app.features.memory.ports.import_writes import Record, Restore, write_restore
from app.infra.memory.storage import MemoryStorage
from app.shared.locations import Location

AT = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
ADDRESS = address_of(Location("user", "notes", "tea"), "alice")
IMPORT = Change("import_memory", "task", AT + timedelta(hours=1))


def record(n: int, operation: str = "write_file", *, deleted: bool = False) -> Record:
    at = AT + timedelta(minutes=n)
    meta = FileMetadata(f"d{n}", (), ("desktop",), at)
    data = b"" if deleted else f"- [stated] {n}\n".encode()
    return Record(Change(operation, f"actor{n}", at), data, meta, deleted)


async def history(storage: MemoryStorage) -> list[tuple[str, str, bool, bytes]]:
    """(operation, actor, deleted, data) of each record, oldest first."""
    listed = await storage.list_versions(ADDRESS.key, after=None, limit=100)
    full = [await storage.get_version(ADDRESS.key, r.version) for r in listed]
    return [
        (r.operation, r.actor, r.deleted, r.data or b"")
        for r in reversed(full)
        if r is not None
    ]


async def test_a_new_file_is_written_once_as_the_import() -> None:
    storage = MemoryStorage()
    meta = FileMetadata("", (), ("task",), IMPORT.at)
    restore = Restore(ADDRESS, b"- [stated] x\n", meta)

    assert await write_restore(storage, restore, IMPORT, overwrite=False) == "created"
    assert await history(storage) == [
        ("import_memory", "task", False, b"- [stated] x\n")
    ]
    assert await write_restore(storage, restore, IMPORT, overwrite=False) == "skipped"


async def test_records_replay_with_their_deletes_and_a_matching_body_ends_it() -> None:
    """Each record keeps its operation and actor; the body equal to the last
    record is not written again."""
    storage = MemoryStorage()
    records = (
        record(0),
        record(1, "delete_file", deleted=True),
        record(2),
        record(3, "append_line"),
    )
    last = records[-1]
    restore = Restore(ADDRESS, last.data, last.metadata, records)

    assert await write_restore(storage, restore, IMPORT, overwrite=False) == "created"

    assert await history(storage) == [
        ("write_file", "actor0", False, b"- [stated] 0\n"),
        ("delete_file", "actor1", True, b""),
        ("write_file", "actor2", False, b"- [stated] 2\n"),
        ("append_line", "actor3", False, b"- [stated] 3\n"),
    ]
    stored = await storage.get(ADDRESS.key)
    assert stored is not None
    assert (stored.data, stored.metadata) == (last.data, last.metadata)


async def test_a_history_that_starts_with_a_delete_replays_the_rest() -> None:
    storage = MemoryStorage()
    records = (record(0, "delete_file", deleted=True), record(1))
    meta = FileMetadata("", (), ("task",), IMPORT.at)
    restore = Restore(ADDRESS, b"- [stated] body\n", meta, records)

    assert await write_restore(storage, restore, IMPORT, overwrite=False) == "created"

    assert await history(storage) == [
        ("write_file", "actor1", False, b"- [stated] 1\n"),
        ("import_memory", "task", False, b"- [stated] body\n"),
    ]
