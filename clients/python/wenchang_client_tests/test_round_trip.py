"""Both clients against a real server: results typed, errors typed, the
precondition a version asks for on every mutation."""

from datetime import UTC, datetime

import pytest
from wenchang_client import (
    AsyncMemoryClient,
    MemoryClient,
    MemoryFile,
    NotFoundError,
    VersionConflictError,
)

from wenchang_client_tests.conftest import LiveServer


def test_the_synchronous_client_writes_edits_and_deletes(
    live_server: LiveServer, token: str
) -> None:
    with MemoryClient(live_server.url, token) as client:
        created = client.write_file(
            "user",
            "notes",
            "tea",
            content="- [stated] Likes tea.\n",
            description="drinks",
            aliases=["tea"],
            expected_version=None,
        )
        appended = client.append_line(
            "user",
            "notes",
            "tea",
            line="- [stated] No sugar.",
            expected_version=created.version,
        )
        with pytest.raises(VersionConflictError) as raised:
            client.append_line(
                "user", "notes", "tea", line="- [stated] x", expected_version="stale"
            )
        listed = client.list_prefix("user")
        client.delete_file("user", "notes", "tea", expected_version=appended.version)
        with pytest.raises(NotFoundError):
            client.read_file("user", "notes", "tea")

    assert isinstance(created, MemoryFile)
    assert appended.content == "- [stated] Likes tea.\n- [stated] No sugar.\n"
    assert (raised.value.content, raised.value.version) == (
        appended.content,
        appended.version,
    )
    assert [entry.name for entry in listed.entries] == ["tea"]


async def test_the_asynchronous_client_round_trips_a_unicode_name(
    live_server: LiveServer, token: str
) -> None:
    async with AsyncMemoryClient(live_server.url, token) as client:
        created = await client.write_file(
            "user",
            "people",
            "Zoë Ångström",
            content="",
            description="",
            aliases=[],
            expected_version=None,
        )
        read = await client.read_file("user", "people", "Zoë Ångström")
        index = await client.get_memory_index()
        again = await client.get_memory_index()

    assert read == created
    assert [entry.name for entry in index.entries] == ["Zoë Ångström"]
    assert again == index


def test_a_create_onto_an_existing_file_is_a_conflict(
    live_server: LiveServer, token: str
) -> None:
    with MemoryClient(live_server.url, token) as client:
        first = client.write_file(
            "user",
            "n",
            "a",
            content="x",
            description="",
            aliases=[],
            expected_version=None,
        )
        with pytest.raises(VersionConflictError) as raised:
            client.write_file(
                "user",
                "n",
                "a",
                content="y",
                description="",
                aliases=[],
                expected_version=None,
            )

    assert raised.value.version == first.version


def test_the_client_sets_keeps_and_clears_an_expiry(
    live_server: LiveServer, token: str
) -> None:
    """ttl_seconds sets expires_at; an expiry in the past hides the file from
    reads, save an owner's include_expired; "never" clears it."""
    with MemoryClient(live_server.url, token) as client:
        lasting = client.write_file(
            "user",
            "scratch",
            "later",
            content="",
            description="",
            aliases=[],
            expected_version=None,
            ttl_seconds=3600,
        )
        gone = client.write_file(
            "user",
            "scratch",
            "gone",
            content="- [stated] Brief.\n",
            description="",
            aliases=[],
            expected_version=None,
            expires_at=datetime(2020, 1, 1, tzinfo=UTC),
        )
        with pytest.raises(NotFoundError):
            client.read_file("user", "scratch", "gone")
        shown = client.read_file("user", "scratch", "gone", include_expired=True)
        listed = client.list_prefix("user", "scratch")
        hidden = client.search_memory("brief")
        found = client.search_memory("brief", include_expired=True)
        indexed = client.get_memory_index()
        owned = client.get_memory_index(include_expired=True)
        cleared = client.write_file(
            "user",
            "scratch",
            "later",
            content="",
            description="",
            aliases=[],
            expected_version=lasting.version,
            expires_at="never",
        )

    assert lasting.expires_at is not None
    assert gone.expires_at == "2020-01-01T00:00:00Z"
    assert shown.content == "- [stated] Brief.\n"
    assert [entry.name for entry in listed.entries] == ["later"]
    assert (hidden.hits, [hit.name for hit in found.hits]) == ([], ["gone"])
    assert [entry.name for entry in indexed.entries] == ["later"]
    assert sorted(entry.name for entry in owned.entries) == ["gone", "later"]
    assert cleared.expires_at is None
