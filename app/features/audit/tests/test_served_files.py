"""Which files an event names as served: each listed entry that names a whole
file (scope, area and name as text), by scope; other entries are passed over."""

from dataclasses import dataclass

from pydantic import BaseModel

from app.features.audit.domain import call_scope, served_files


class Version(BaseModel):
    version: str


@dataclass
class Entry:
    scope: object
    area: object
    name: object


@dataclass
class Listing:
    entries: list[object]


class Bare:
    """An entry with no location at all."""


def test_entries_that_name_no_whole_file_are_passed_over_not_stopped_at() -> None:
    listing = Listing(
        entries=[
            Version(version="v1"),
            Bare(),
            Entry("user", "notes", None),
            Entry("user", None, "tea"),
            Entry(None, "notes", "tea"),
            Entry("user", "notes", "tea"),
            Entry("team", "plans", "q3"),
            Entry("user", "notes", "milk"),
        ]
    )
    assert served_files(listing) == {
        "user": ["notes/tea", "notes/milk"],
        "team": ["plans/q3"],
    }


def test_a_call_scope_is_the_scope_its_request_names() -> None:
    assert call_scope({"scope": "team"}) == "team"
    assert call_scope({"area": "notes"}) is None
