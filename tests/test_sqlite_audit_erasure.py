"""What other processes staged, as the SQLite audit log's queries and erasures see it.

A write of another process can commit its staged event after a purge ran, while
the event itself happened before it. The purge wins (docs/audit.md): when the log
moves staged events into its table, one of an erased subject from before the
erasure is dropped, and every other one is moved. Every query and erasure moves
them first, even when this process buffered nothing: a query never misses a
staged event and an erasure leaves none of its subject staged.
"""

from datetime import UTC, datetime
from pathlib import Path

from app.features.audit.ports import AuditSelection, Subject
from app.infra.sqlite.audit_log import open_sqlite_audit_log
from tests.support.audited_app import stage_event, staged_count, staged_write

ALICE, BOB = Subject("user", "alice"), Subject("user", "bob")


async def test_an_event_staged_after_its_entitys_erasure_is_dropped(
    tmp_path: Path,
) -> None:
    database = tmp_path / "wenchang.db"
    async with open_sqlite_audit_log(str(database), max_days=30) as log:
        erased, kept = staged_write("tea"), staged_write("tea", entity_id="bob")
        await log.erase(ALICE, at=datetime.now(UTC))
        stage_event(database, erased, "v1")
        stage_event(database, kept, "v2")

        page = await log.query(
            AuditSelection(subjects=(ALICE, BOB)), before=None, limit=10
        )

    assert [(e.id, e.version) for e in page.events] == [(kept.id, "v2")]
    assert staged_count(database) == 0


async def test_a_query_and_an_erasure_each_move_what_another_process_staged(
    tmp_path: Path,
) -> None:
    """This process buffered nothing: the query still sees Bob's staged event,
    and the erasure of Alice leaves none of hers staged."""
    database = tmp_path / "wenchang.db"
    async with open_sqlite_audit_log(str(database), max_days=30) as log:
        bobs = staged_write("tea", entity_id="bob")
        stage_event(database, bobs, "v1")
        page = await log.query(AuditSelection(subjects=(BOB,)), before=None, limit=10)
        stage_event(database, staged_write("tea"), "v2")
        await log.erase(ALICE, at=datetime.now(UTC))
        left = staged_count(database)

    assert [e.id for e in page.events] == [bobs.id]
    assert left == 0
