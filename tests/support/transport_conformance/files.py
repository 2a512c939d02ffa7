"""Conformance of whole files: round trips, versions, create, replace, delete."""

import re

from wenchang_client.errors import (
    NotFoundError,
    OversizeWriteError,
    VersionConflictError,
)

from app.features.memory.schemas import Deleted
from app.shared.errors import (
    memory_not_found_error,
    oversize_write_error,
    version_conflict_error,
)
from app.shared.identity import Identity
from app.shared.locations import Location

from .harness import (
    MAX_FILE_BYTES,
    OTHER_SOURCE,
    SOURCE,
    TIMESTAMP,
    Connect,
    Harness,
    Transport,
    assert_payload,
    conformance_identity,
    create,
    entry_of,
    expect,
)

PROBE = Location("user", "notes", "probe")
MARKDOWN = (
    "# Heading\r\n- [stated]  two spaces\n-[stated] no space\n  trailing  \n\n"
    "```\n- [stated] fenced\n```"
)


class FileConformance(Harness):
    async def test_write_then_read_round_trips(self, transport: Transport) -> None:
        """A created file reads back exactly as the write returned it."""
        written = await create(transport)

        read = await transport.read_file("user", "notes", "probe")

        assert read == written
        assert (read.scope, read.area, read.name) == ("user", "notes", "probe")
        assert (read.content, read.description) == ("- [stated] a\n", "d")
        assert read.aliases == ["x", "y"]
        assert read.sources == [SOURCE]
        assert re.fullmatch(TIMESTAMP, read.last_updated)
        assert read.version

    async def test_unicode_content_metadata_and_name_round_trip(
        self, transport: Transport
    ) -> None:
        """Non-ASCII text survives in the body, metadata and the name itself."""
        name = "café ☕ 日本 %20?#"
        content = "- [stated] café ☕ 日本語 😀\n"

        written = await create(
            transport, name, content, description="déjà vu", aliases=("日本", "ñ")
        )
        read = await transport.read_file("user", "notes", name)

        assert read == written
        assert (read.name, read.content, read.description) == (name, content, "déjà vu")
        assert read.aliases == ["日本", "ñ"]

    async def test_markdown_and_empty_description_survive_byte_for_byte(
        self, transport: Transport
    ) -> None:
        """CRLF, near-fact lines, fences and blank lines are stored as given."""
        await create(transport, content=MARKDOWN, description="")

        read = await transport.read_file("user", "notes", "probe")

        assert (read.content, read.description) == (MARKDOWN, "")

    async def test_alias_order_and_duplicates_are_kept_as_written(
        self, transport: Transport
    ) -> None:
        """write_file stores aliases exactly, order and duplicates included."""
        await create(transport, content="- [stated] a", aliases=("y", "x", "y"))

        read = await transport.read_file("user", "notes", "probe")

        assert read.aliases == ["y", "x", "y"]
        assert read.content == "- [stated] a"

    async def test_empty_content_and_aliases_round_trip(
        self, transport: Transport
    ) -> None:
        """An empty body and an empty alias list are valid files."""
        await create(transport, content="", aliases=())

        read = await transport.read_file("user", "notes", "probe")

        assert (read.content, read.aliases) == ("", [])

    async def test_read_absent_is_file_absent(self, transport: Transport) -> None:
        """Reading a file that was never written is NotFoundError(file_absent)."""
        raised = await expect(
            transport.read_file("user", "notes", "probe"), NotFoundError
        )

        assert_payload(raised, memory_not_found_error(PROBE))
        assert raised.reason == "file_absent"

    async def test_replace_replaces_metadata_and_keeps_sources(
        self, connect: Connect, transport: Transport, identity: Identity
    ) -> None:
        """Replacing sets description and aliases; sources only ever grow."""
        first = await create(transport)
        async with connect(conformance_identity(OTHER_SOURCE, like=identity)) as other:
            second = await other.write_file(
                "user",
                "notes",
                "probe",
                content="- [stated] b\n",
                description="d2",
                aliases=["z"],
                expected_version=first.version,
            )

        third = await transport.write_file(
            "user",
            "notes",
            "probe",
            content="- [stated] c\n",
            description="d3",
            aliases=[],
            expected_version=second.version,
        )

        assert second.sources == sorted([SOURCE, OTHER_SOURCE])
        assert (third.content, third.description, third.aliases) == (
            "- [stated] c\n",
            "d3",
            [],
        )
        assert third.sources == sorted([SOURCE, OTHER_SOURCE])
        assert await transport.read_file("user", "notes", "probe") == third

    async def test_oversize_write_is_rejected_before_storage(
        self, transport: Transport
    ) -> None:
        """One byte over the limit is OversizeWriteError; nothing is stored."""
        content = "é" * (MAX_FILE_BYTES // 2) + "x"

        raised = await expect(create(transport, content=content), OversizeWriteError)

        assert_payload(
            raised, oversize_write_error(PROBE, MAX_FILE_BYTES + 1, MAX_FILE_BYTES)
        )
        assert (raised.size, raised.limit) == (MAX_FILE_BYTES + 1, MAX_FILE_BYTES)
        await expect(transport.read_file("user", "notes", "probe"), NotFoundError)

    async def test_content_of_exactly_the_limit_is_accepted(
        self, transport: Transport
    ) -> None:
        """The byte limit is inclusive."""
        content = "é" * (MAX_FILE_BYTES // 2)

        written = await create(transport, content=content)

        assert written.content == content

    async def test_create_on_existing_file_conflicts(
        self, transport: Transport
    ) -> None:
        """expected_version=None on an existing file carries its current state."""
        current = await create(transport)

        raised = await expect(
            create(transport, content="- [stated] other\n"), VersionConflictError
        )

        assert_payload(
            raised, version_conflict_error(PROBE, current.content, current.version)
        )
        assert (raised.content, raised.version) == (current.content, current.version)
        assert await transport.read_file("user", "notes", "probe") == current

    async def test_stale_write_conflicts_and_carried_version_succeeds(
        self, transport: Transport
    ) -> None:
        """A stale version conflicts; the version it carries is accepted."""
        first = await create(transport)
        second = await transport.write_file(
            "user",
            "notes",
            "probe",
            content="- [stated] b\n",
            description="dB",
            aliases=[],
            expected_version=first.version,
        )

        raised = await expect(
            transport.write_file(
                "user",
                "notes",
                "probe",
                content="- [stated] stale\n",
                description="stale",
                aliases=[],
                expected_version=first.version,
            ),
            VersionConflictError,
        )
        retried = await transport.write_file(
            "user",
            "notes",
            "probe",
            content="- [stated] merged\n",
            description="dC",
            aliases=[],
            expected_version=raised.version,
        )

        assert (raised.content, raised.version) == (second.content, second.version)
        assert retried.content == "- [stated] merged\n"
        assert await transport.read_file("user", "notes", "probe") == retried

    async def test_versioned_write_on_absent_file_is_file_absent(
        self, transport: Transport
    ) -> None:
        """A version against a missing file is NotFoundError, and creates nothing."""
        raised = await expect(
            transport.write_file(
                "user",
                "notes",
                "probe",
                content="",
                description="",
                aliases=[],
                expected_version="1",
            ),
            NotFoundError,
        )

        assert_payload(raised, memory_not_found_error(PROBE))
        await expect(transport.read_file("user", "notes", "probe"), NotFoundError)

    async def test_delete_removes_the_file_everywhere(
        self, transport: Transport
    ) -> None:
        """After delete_file the file is absent, unlisted and out of the index."""
        written = await create(transport)

        deleted = await transport.delete_file(
            "user", "notes", "probe", expected_version=written.version
        )

        assert deleted == Deleted()
        await expect(transport.read_file("user", "notes", "probe"), NotFoundError)
        assert (await transport.list_prefix("user")).entries == []
        assert (await transport.get_memory_index()).entries == []

    async def test_stale_delete_conflicts_and_keeps_the_file(
        self, transport: Transport
    ) -> None:
        """A stale delete carries the current state; its version then deletes."""
        first = await create(transport)
        second = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] b",
            expected_version=first.version,
        )

        raised = await expect(
            transport.delete_file(
                "user", "notes", "probe", expected_version=first.version
            ),
            VersionConflictError,
        )

        assert (raised.content, raised.version) == (second.content, second.version)
        assert await transport.read_file("user", "notes", "probe") == second
        await transport.delete_file(
            "user", "notes", "probe", expected_version=raised.version
        )
        await expect(transport.read_file("user", "notes", "probe"), NotFoundError)

    async def test_delete_absent_is_file_absent(self, transport: Transport) -> None:
        """Deleting a file that does not exist is NotFoundError(file_absent)."""
        raised = await expect(
            transport.delete_file("user", "notes", "probe", expected_version="1"),
            NotFoundError,
        )

        assert_payload(raised, memory_not_found_error(PROBE))

    async def test_versions_from_every_operation_are_accepted(
        self, transport: Transport
    ) -> None:
        """Each result's version (file, listing, index) guards the next write."""
        written = await create(transport, content="- [stated] alpha\n")
        appended = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] b",
            expected_version=written.version,
        )
        replaced = await transport.replace_fact(
            "user",
            "notes",
            "probe",
            old_string="alpha",
            new_string="omega",
            expected_version=appended.version,
        )
        rewritten = await transport.write_file(
            "user",
            "notes",
            "probe",
            content="- [stated] c\n",
            description="d",
            aliases=[],
            expected_version=replaced.version,
        )
        read = await transport.read_file("user", "notes", "probe")
        again = await transport.append_line(
            "user", "notes", "probe", line="- [stated] d", expected_version=read.version
        )
        (listed,) = (await transport.list_prefix("user", "notes")).entries
        (indexed,) = (await transport.get_memory_index()).entries

        assert read == rewritten
        assert listed == indexed == entry_of(again)
        await transport.delete_file(
            "user", "notes", "probe", expected_version=indexed.version
        )
