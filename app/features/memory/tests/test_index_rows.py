"""The index is written from plain rows: the same bytes and files as its models."""

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from app.features.audit.domain import Call, Outcome, call_events
from app.features.memory.domain import build_index, file_key, format_timestamp
from app.features.memory.domain.index import EntryRow, entry_json, row_json
from app.features.memory.domain.index_answers import IndexAnswer
from app.features.memory.ports import FileMetadata, ListedObject
from app.features.memory.schemas import FileEntry
from app.shared.identity import Grant

from .conftest import START

texts = st.text(max_size=40)


@given(
    fields=st.tuples(*[texts] * 6),
    aliases=st.lists(texts, max_size=3),
    sources=st.lists(texts, max_size=3),
)
def test_a_row_is_written_as_its_entry_model_is(
    fields: tuple[str, ...], aliases: list[str], sources: list[str]
) -> None:
    """Any text, escapes and non-ASCII included: the budget counts the same bytes."""
    scope, area, name, version, description, updated = fields
    row: EntryRow = {
        "scope": scope,
        "area": area,
        "name": name,
        "version": version,
        "description": description,
        "aliases": tuple(aliases),
        "sources": tuple(sources),
        "last_updated": updated,
    }

    assert row_json(row) == entry_json(FileEntry.model_validate(row))


def listed(path: str, seconds: int) -> ListedObject:
    scope, area, name = path.split("/")
    meta = FileMetadata("d", ("a",), ("http",), START + timedelta(seconds=seconds))
    key = file_key(scope, "e", area, name)
    shown = format_timestamp(meta.last_updated)
    return ListedObject(key, meta, f"v{seconds}", shown)


PATHS = ["user/notes/a", "team/plans/b", "user/system/c", "user/notes/d", "team/x/e"]


def test_the_files_an_index_serves_are_its_kept_entries_by_scope() -> None:
    """``files`` is what walking the index's entries finds, capped entries left out."""
    items = [listed(path, seconds) for seconds, path in enumerate(PATHS)]
    full = build_index(items, priority=(), max_bytes=1 << 20)
    cost = sum(map(len, full.texts)) // len(PATHS)  # room for about three entries
    capped = build_index(items, priority=(), max_bytes=3 * cost)

    for built in (full, capped):
        walked: dict[str, list[str]] = {}
        for entry in built.index.entries:
            walked.setdefault(entry.scope, []).append(f"{entry.area}/{entry.name}")
        assert built.files == walked
    assert capped.index.capped and sum(map(len, capped.files.values())) == len(
        capped.index.entries
    )


def test_the_audit_records_the_files_an_index_answer_served() -> None:
    """An index read's events hold each scope's served files, in index order."""
    items = [listed(path, seconds) for seconds, path in enumerate(PATHS)]
    answer = IndexAnswer('"ix"', build_index(items, priority=(), max_bytes=1 << 20))
    grants = {"user": Grant("e", "owner"), "team": Grant("e", "member")}
    call = Call("get_memory_index", "http", "a", "tok", "req", grants)

    events = call_events(call, None, Outcome("ok", answer), at=START)
    not_modified = call_events(
        call, None, Outcome("ok", IndexAnswer("t", None)), at=START
    )

    assert {event.scope: list(event.files) for event in events} == {
        "team": ["x/e", "plans/b"],
        "user": ["system/c", "notes/d", "notes/a"],
    }
    assert [event.files for event in not_modified] == [(), ()]
