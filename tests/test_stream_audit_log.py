"""The audit logs that keep nothing to query: a stream (stdout) and none.

A stream gets each event as one JSON line, a read's events (a draft) at once;
a query of either is AUDIT_UNAVAILABLE naming where the events go.
"""

import io

import pytest
from tenchi.errors import AppError

from app.features.audit.ports import AuditSelection, Subject
from app.infra.audit_records import event_to_line
from app.infra.stream_audit_log import NoAuditLog, StreamAuditLog
from app.shared.errors import audit_unavailable
from tests.support.audit_events import Drafted
from tests.support.audited_app import staged_write

SELECTION = AuditSelection(subjects=(Subject("user", "alice"),))


async def test_each_event_is_one_line_and_a_draft_is_written_at_once() -> None:
    stream = io.StringIO()
    log = StreamAuditLog(lambda: stream)
    first, second, drafted = staged_write("a"), staged_write("b"), staged_write("c")

    await log.record([first, second], durable=True)
    log.record_later(Drafted([drafted]))

    assert stream.getvalue() == "".join(map(event_to_line, (first, second, drafted)))


@pytest.mark.parametrize("name", [None, "stderr", "none"])
async def test_a_query_is_refused_naming_where_the_events_go(name: str | None) -> None:
    if name is None:
        log: StreamAuditLog | NoAuditLog = StreamAuditLog(io.StringIO)
    elif name == "none":
        log = NoAuditLog()
    else:
        log = StreamAuditLog(io.StringIO, name=name)

    with pytest.raises(AppError) as raised:
        await log.query(SELECTION, before=None, limit=10)

    assert raised.value.definition is audit_unavailable
    assert raised.value.details["store"] == (name or "stdout")
