"""What an export holds of a stored file and of each version record."""

from datetime import UTC, datetime

from app.features.memory.domain.exports import exported_file, exported_record
from app.features.memory.ports import FileMetadata, StoredObject, VersionRecord

AT = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
EXPIRES = datetime(2026, 4, 1, 0, 0, 0, tzinfo=UTC)


def test_an_exported_file_carries_its_expiry_only_when_it_has_one() -> None:
    meta = FileMetadata("Drinks", ("cha",), ("desktop",), AT, EXPIRES)
    stored = StoredObject(b"- [stated] Tea.\n", meta, "v1")

    expiring = exported_file("notes", "tea", stored)
    lasting = exported_file(
        "notes", "tea", StoredObject(stored.data, FileMetadata("", (), (), AT), "v2")
    )

    assert expiring.model_dump() == {
        "area": "notes",
        "name": "tea",
        "content": "- [stated] Tea.\n",
        "description": "Drinks",
        "aliases": ["cha"],
        "sources": ["desktop"],
        "last_updated": "2026-03-01T12:00:00Z",
        "version": "v1",
        "expires_at": "2026-04-01T00:00:00Z",
    }
    assert lasting.expires_at is None
    assert "expires_at" not in lasting.model_dump()


def test_an_exported_record_keeps_its_fields_and_a_tombstone_has_no_content() -> None:
    meta = FileMetadata("Drinks", ("cha",), ("desktop",), AT)
    written = VersionRecord("v1", "append_line", "desktop", False, 5, meta, b"hello")
    gone = VersionRecord("v2", "delete_file", "desktop", True, 0, meta, None)

    record = exported_record(written)
    tombstone = exported_record(gone)

    assert record.model_dump() == {
        "version": "v1",
        "operation": "append_line",
        "actor": "desktop",
        "at": AT,
        "deleted": False,
        "content": "hello",
        "description": "Drinks",
        "aliases": ["cha"],
        "sources": ["desktop"],
    }
    assert (tombstone.deleted, tombstone.content) == (True, "")
