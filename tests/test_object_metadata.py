"""File metadata as the flat string map the filesystem and GCS adapters keep.

A map that lacks keys, or holds a list that is not a JSON array of strings,
is refused naming what is wrong; an empty expiry is none.
"""

from datetime import UTC, datetime

import pytest

from app.features.memory.ports import FileMetadata
from app.infra.object_metadata import metadata_from_map, metadata_to_map

AT = datetime(2026, 3, 1, 12, tzinfo=UTC)
META = FileMetadata("Tea", ("green", "sencha"), ("http",), AT)


def stored(**changes: str) -> dict[str, str]:
    return {**metadata_to_map(META), **changes}


def test_a_map_reads_back_as_the_metadata_written() -> None:
    assert metadata_from_map(stored()) == META
    assert metadata_from_map(stored(**{"expires-at": ""})) == META


def test_a_map_without_keys_is_refused_naming_each() -> None:
    values = stored()
    del values["description"], values["sources"]

    with pytest.raises(ValueError) as raised:
        metadata_from_map(values)

    assert str(raised.value) == "stored metadata lacks description, sources"


@pytest.mark.parametrize(
    "aliases", ['"green"', '{"green": "tea"}', "[1, 2]", '["green", null]', "null"]
)
def test_a_list_that_is_not_a_json_array_of_strings_is_refused(aliases: str) -> None:
    with pytest.raises(ValueError) as raised:
        metadata_from_map(stored(aliases=aliases))

    assert str(raised.value) == (
        "stored metadata 'aliases' is not a JSON array of strings"
    )
