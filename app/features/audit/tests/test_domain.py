"""What one call becomes: events per scope, served files, versions, refusals."""

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from app.features.audit.domain import (
    MAX_FILES,
    Call,
    Outcome,
    call_events,
    ok_event,
)
from app.features.audit.domain.marks import new_event_id
from app.features.memory.schemas import (
    Deleted,
    DeleteFile,
    FileEntry,
    FileListing,
    ReadFile,
    VersionEntry,
    VersionListing,
)
from app.shared.identity import Grant

AT = datetime(2026, 12, 1, tzinfo=UTC)
GRANTS = {"user": Grant("alice", "owner"), "project": Grant("p-1", "member")}


def call(operation: str) -> Call:
    return Call(operation, "mcp", "claude", "tok_1", "req-1", GRANTS)


@dataclass
class Entry:
    scope: str
    area: str
    name: str


@dataclass
class Listing:
    entries: list[Entry] = field(default_factory=list[Entry])


@dataclass
class Hits:
    hits: list[Entry] = field(default_factory=list[Entry])


def test_a_call_over_every_scope_is_one_event_per_scope_with_its_files() -> None:
    """The index is split by scope: each event holds only its scope's files."""
    index = Listing([Entry("user", "notes", "tea"), Entry("project", "plan", "q1")])

    events = call_events(call("get_memory_index"), None, Outcome("ok", index), at=AT)

    assert [(e.scope, e.entity_id, e.files) for e in events] == [
        ("project", "p-1", ("plan/q1",)),
        ("user", "alice", ("notes/tea",)),
    ]
    assert {e.request_id for e in events} == {"req-1"}


def test_search_hits_are_recorded_as_files() -> None:
    """A result answering ``hits`` names what it returned, like a listing."""
    found = Hits([Entry("user", "notes", "tea")])

    events = call_events(call("search_memory"), None, Outcome("ok", found), at=AT)

    assert [e.files for e in events if e.scope == "user"] == [("notes/tea",)]


def test_files_beyond_the_cap_are_counted_not_listed() -> None:
    """At most MAX_FILES names; files_omitted counts the rest."""
    many = Listing([Entry("user", "notes", f"n{i}") for i in range(MAX_FILES + 7)])
    request = {"scope": "user", "area": "notes"}

    (event,) = call_events(call("list_prefix"), request, Outcome("ok", many), at=AT)

    assert (len(event.files), event.files_omitted) == (MAX_FILES, 7)


def test_a_refused_call_records_its_code_and_nothing_it_did_not_do() -> None:
    """A refusal has no version and no files, and keeps where it pointed."""
    request = ReadFile(scope="user", area="notes", name="tea")

    (event,) = call_events(
        call("read_file"), request, Outcome("MEMORY_NOT_FOUND"), at=AT
    )

    assert (event.outcome, event.version, event.files) == ("MEMORY_NOT_FOUND", None, ())
    assert (event.scope, event.entity_id, event.area, event.name) == (
        "user",
        "alice",
        "notes",
        "tea",
    )


def test_a_delete_records_the_version_it_removed() -> None:
    """``{"ok": true}`` carries no version: the one the call named is recorded."""
    request = DeleteFile(scope="user", area="notes", name="tea", expected_version="v7")

    (event,) = call_events(
        call("delete_file"), request, Outcome("ok", Deleted()), at=AT
    )

    assert event.version == "v7"


def test_a_scope_the_caller_lacks_belongs_to_no_entity() -> None:
    """Nobody can read back a call on an ungranted scope: its entity is None."""
    request = ReadFile(scope="team", area="notes", name="tea")

    (event,) = call_events(
        call("read_file"), request, Outcome("INVALID_ARGUMENT"), at=AT
    )

    assert (event.scope, event.entity_id) == ("team", None)


def test_event_ids_are_32_hex_digits_in_the_order_they_were_made() -> None:
    """Later ids sort after earlier ones, so a store's id index only appends."""
    ids = [new_event_id() for _ in range(2000)]

    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert len(set(ids)) == len(ids)
    assert [i[:14] for i in ids] == sorted(i[:14] for i in ids)


def test_listed_files_are_recorded_and_version_entries_name_none() -> None:
    """A listing's file entries are its files; a version listing names no file."""
    fields = dict(scope="user", area="notes", name="tea", version="v1")
    entry = FileEntry.model_validate(
        fields | dict(description="d", aliases=[], sources=[], last_updated="t")
    )
    listing = FileListing(entries=[entry, entry], next_cursor=None)
    version = VersionEntry(
        version="v1", operation="write_file", actor="a", at="t", size=1, deleted=False
    )
    versions = VersionListing(entries=[version], next_cursor=None)
    request = {"scope": "user", "area": "notes", "name": "tea"}

    (listed,) = call_events(call("list_prefix"), request, Outcome("ok", listing), at=AT)
    (read,) = call_events(
        call("list_versions"), request, Outcome("ok", versions), at=AT
    )

    assert listed.files == ("notes/tea", "notes/tea")
    assert read.files == ()


def test_a_mutations_event_before_its_write_is_its_ok_event_without_a_version() -> None:
    """``ok_event``: ``call_events``' one ok event of a one-scope call, no result."""
    fields: dict[str, object] = {
        "scope": "user",
        "area": "notes",
        "name": "tea",
        "expected_version": "v1",
        "content": "never recorded",
    }
    named = {**fields, "scope": "project", "entity_id": "p-9"}
    ungranted = {**fields, "scope": "elsewhere"}
    model = ReadFile(scope="user", area="notes", name="tea")
    for request in (fields, named, ungranted, model):
        (expected,) = call_events(call("write_file"), request, Outcome("ok"), at=AT)
        built = ok_event(call("write_file"), request, at=AT)
        assert built is not None
        assert replace(built, id=expected.id) == expected
        assert built.version is None
    assert ok_event(call("get_memory_index"), None, at=AT) is None
    assert ok_event(call("write_file"), {"area": "notes"}, at=AT) is None
