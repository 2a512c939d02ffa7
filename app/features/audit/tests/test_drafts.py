"""A draft builds, later, the very events its call gave, and keeps no content."""

import dataclasses
import time
from datetime import UTC, datetime

from app.features.audit.domain import Call, Outcome, call_events
from app.features.audit.domain.drafts import draft_call
from app.features.audit.ports import AuditEvent
from app.features.memory.schemas import (
    Deleted,
    DeleteFile,
    FileEntry,
    FileListing,
    MemoryFile,
    ReadFile,
    WriteFile,
)
from app.shared.identity import Grant

AT = datetime(2026, 12, 1, tzinfo=UTC)
CALL = Call(
    "read_file", "http", "claude", "tok_1", "req-1", {"user": Grant("a", "owner")}
)
SECRET = "- [stated] the secret body\n"


def without_id(events: list[AuditEvent]) -> list[AuditEvent]:
    return [dataclasses.replace(event, id="") for event in events]


def read() -> tuple[ReadFile, MemoryFile]:
    request = ReadFile(scope="user", area="notes", name="tea")
    answer = MemoryFile(
        scope="user",
        area="notes",
        name="tea",
        content=SECRET,
        version="v7",
        description="d",
        aliases=[],
        sources=[],
        last_updated="2026-12-01T00:00:00Z",
    )
    return request, answer


def test_a_drafted_read_builds_the_events_of_the_call() -> None:
    request, answer = read()
    outcome = Outcome("ok", answer)
    made = time.time_ns()

    draft = draft_call(CALL, request, outcome, at=AT, made_ns=made)

    assert without_id(draft.events()) == without_id(
        call_events(CALL, request, outcome, at=AT)
    )
    assert draft.events()[0].id[:14] == f"{made // 1000:014x}"
    assert draft.size == 1


def test_a_draft_keeps_no_content_of_what_the_call_answered() -> None:
    request, answer = read()

    draft = draft_call(CALL, request, Outcome("ok", answer), at=AT, made_ns=0)

    assert SECRET not in repr(draft)
    assert draft.events()[0].version == "v7"


def test_a_refused_write_is_drafted_without_its_body() -> None:
    _, answer = read()
    kept = {"scope", "area", "name", "content", "description", "aliases"}
    write = WriteFile(**answer.model_dump(include=kept), expected_version="v2")
    refused = Outcome("VERSION_CONFLICT")

    draft = draft_call(CALL, write, refused, at=AT, made_ns=0)

    assert SECRET not in repr(draft)
    assert without_id(draft.events()) == without_id(
        call_events(CALL, write, refused, at=AT)
    )


def test_a_drafted_listing_keeps_its_files_and_a_delete_its_version() -> None:
    listing = FileListing(
        entries=[FileEntry.model_construct(scope="user", area="notes", name="tea")],
        next_cursor=None,
    )
    listed = draft_call(
        CALL, {"scope": "user"}, Outcome("ok", listing), at=AT, made_ns=0
    )
    delete = DeleteFile.model_construct(
        scope="user", area="notes", name="tea", expected_version="v3"
    )
    deleted = draft_call(
        CALL, delete, Outcome("ok", Deleted(ok=True)), at=AT, made_ns=0
    )

    assert listed.events()[0].files == ("notes/tea",)
    assert deleted.events()[0].version == "v3"


def test_a_drafted_index_holds_texts_not_the_models_it_answered() -> None:
    grants = {"user": Grant("a", "owner"), "team": Grant("t", "member")}
    index = Call("get_memory_index", "http", "c", None, "r", grants)
    entries = [
        FileEntry.model_construct(scope=scope, area="notes", name=f"n{i}")
        for i in range(3)
        for scope in ("user", "team")
    ]
    answer = FileListing(entries=entries, next_cursor=None)
    outcome = Outcome("ok", answer)

    draft = draft_call(index, None, outcome, at=AT, made_ns=0)

    # A waiting draft that held the answer's models would make every garbage
    # collection walk them: hundreds per index call.
    assert "FileEntry" not in repr(draft)
    assert without_id(draft.events()) == without_id(
        call_events(index, None, outcome, at=AT)
    )
    assert [event.files for event in draft.events()] == [
        ("notes/n0", "notes/n1", "notes/n2"),
        ("notes/n0", "notes/n1", "notes/n2"),
    ]


def test_a_draft_over_every_scope_counts_one_event_per_scope() -> None:
    grants = {"user": Grant("a", "owner"), "team": Grant("t", "member")}
    index = Call("get_memory_index", "http", "c", None, "r", grants)

    assert draft_call(index, None, Outcome("ok"), at=AT, made_ns=0).size == 2


def test_a_draft_naming_one_scope_counts_one_event_whatever_the_grants() -> None:
    grants = {"user": Grant("a", "owner"), "team": Grant("t", "member")}
    read_call = Call("read_file", "http", "c", None, "r", grants)
    nobody = Call("get_memory_index", "http", "c", None, "r", {})
    request, answer = read()

    named = draft_call(read_call, request, Outcome("ok", answer), at=AT, made_ns=0)
    ungranted = draft_call(nobody, None, Outcome("ok"), at=AT, made_ns=0)

    assert (named.size, len(named.events())) == (1, 1)
    assert (ungranted.size, len(ungranted.events())) == (1, 1)


def test_events_made_at_a_given_moment_carry_it_and_omit_no_file() -> None:
    request, answer = read()
    listing = FileListing(
        entries=[FileEntry.model_construct(scope="user", area="notes", name="tea")],
        next_cursor=None,
    )
    made = time.time_ns() - 3_600_000_000_000  # an hour ago: not "now"

    [event] = call_events(CALL, request, Outcome("ok", answer), at=AT, made_ns=made)
    [listed] = call_events(CALL, {"scope": "user"}, Outcome("ok", listing), at=AT)

    assert event.id[:14] == f"{made // 1000:014x}"
    assert (event.files, event.files_omitted) == ((), 0)
    assert (listed.files, listed.files_omitted) == (("notes/tea",), 0)
