"""Conformance of version history: list, read and restore on every transport."""

from wenchang_client.errors import (
    InvalidArgumentError,
    NotFoundError,
    RestrictedScopeError,
    VersionConflictError,
)

from app.features.memory.schemas import VersionEntry
from app.shared.errors import (
    history_absent_error,
    invalid_argument_error,
    system_read_only_error,
    version_absent_error,
    version_conflict_error,
)
from app.shared.locations import VERSION_RULE, Location

from .harness import (
    SOURCE,
    Connect,
    Harness,
    Transport,
    assert_payload,
    conformance_identity,
    create,
    expect,
)

PROBE = Location("user", "notes", "probe")


async def history(transport: Transport, name: str = "probe") -> list[VersionEntry]:
    """Every entry of the file's history, following next_cursor."""
    entries: list[VersionEntry] = []
    cursor: str | None = None
    while True:
        page = await transport.list_versions("user", "notes", name, cursor)
        entries += page.entries
        if page.next_cursor is None:
            return entries
        cursor = page.next_cursor


async def _lifecycle(transport: Transport) -> list[str]:
    """create, append, delete; the versions of the two writes."""
    created = await create(transport)
    appended = await transport.append_line(
        "user", "notes", "probe", line="- [stated] b", expected_version=created.version
    )
    await transport.delete_file(
        "user", "notes", "probe", expected_version=appended.version
    )
    return [created.version, appended.version]


class HistoryConformance(Harness):
    async def test_history_lists_every_change_newest_first(
        self, transport: Transport
    ) -> None:
        """Each landed change is one entry; the delete's entry comes first."""
        versions = await _lifecycle(transport)

        entries = await history(transport)

        assert [e.operation for e in entries] == [
            "delete_file",
            "append_line",
            "write_file",
        ]
        assert [e.version for e in entries[1:]] == versions[::-1]
        assert {e.actor for e in entries} == {SOURCE}
        assert [e.deleted for e in entries] == [True, False, False]

    async def test_read_version_returns_the_file_as_it_stood(
        self, transport: Transport
    ) -> None:
        """The first version reads back with its content; a delete's has none."""
        versions = await _lifecycle(transport)
        tomb = (await history(transport))[0]

        first = await transport.read_version("user", "notes", "probe", versions[0])
        dead = await transport.read_version("user", "notes", "probe", tomb.version)

        assert (first.file.content, first.file.version) == (
            "- [stated] a\n",
            versions[0],
        )
        assert (first.operation, first.deleted) == ("write_file", False)
        assert dead.deleted and dead.file.content == ""

    async def test_restore_recreates_a_deleted_file(self, transport: Transport) -> None:
        """With a null expected_version a restore brings a deleted file back."""
        versions = await _lifecycle(transport)

        restored = await transport.restore_version(
            "user", "notes", "probe", version=versions[0], expected_version=None
        )

        assert restored.content == "- [stated] a\n"
        assert restored.version not in versions
        assert await transport.read_file("user", "notes", "probe") == restored
        newest = (await history(transport))[0]
        assert newest.operation == "restore_version"

    async def test_restore_is_version_guarded(self, transport: Transport) -> None:
        """A stale expected_version is a conflict carrying the current state."""
        created = await create(transport)
        current = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] b",
            expected_version=created.version,
        )

        raised = await expect(
            transport.restore_version(
                "user",
                "notes",
                "probe",
                version=created.version,
                expected_version=created.version,
            ),
            VersionConflictError,
        )

        expected = version_conflict_error(PROBE, current.content, current.version)
        assert_payload(raised, expected)

    async def test_unknown_versions_and_tombstones_are_refused(
        self, transport: Transport
    ) -> None:
        """version_absent for an unknown version; a delete's record has no content."""
        await _lifecycle(transport)
        tomb = (await history(transport))[0]

        absent = await expect(
            transport.read_version("user", "notes", "probe", "no-such"), NotFoundError
        )
        dead = await expect(
            transport.restore_version(
                "user", "notes", "probe", version=tomb.version, expected_version=None
            ),
            InvalidArgumentError,
        )
        never = await expect(
            transport.list_versions("user", "notes", "never"), NotFoundError
        )

        assert_payload(absent, version_absent_error(PROBE, "no-such"))
        assert dead.argument == "version"
        assert_payload(never, history_absent_error(Location("user", "notes", "never")))

    async def test_a_version_holding_a_slash_is_invalid_everywhere(
        self, transport: Transport
    ) -> None:
        """No version has '/': reading or restoring one is INVALID_ARGUMENT."""
        await _lifecycle(transport)

        read = await expect(
            transport.read_version("user", "notes", "probe", "a/b"),
            InvalidArgumentError,
        )
        restore = await expect(
            transport.restore_version(
                "user", "notes", "probe", version="a/b", expected_version=None
            ),
            InvalidArgumentError,
        )

        expected = invalid_argument_error("version", f"'a/b' {VERSION_RULE}")
        assert_payload(read, expected)
        assert_payload(restore, expected)

    async def test_restore_into_system_is_refused(self, transport: Transport) -> None:
        """system/ is read-only for restores as for every write."""
        raised = await expect(
            transport.restore_version(
                "user", "system", "rules", version="1", expected_version=None
            ),
            RestrictedScopeError,
        )

        assert_payload(
            raised, system_read_only_error(Location("user", "system", "rules"))
        )

    async def test_another_entitys_history_does_not_exist(
        self, transport: Transport, connect: Connect
    ) -> None:
        """Another identity sees no history, not even that it exists."""
        versions = await _lifecycle(transport)

        async with connect(conformance_identity()) as stranger:
            listed = await expect(
                stranger.list_versions("user", "notes", "probe"), NotFoundError
            )
            read = await expect(
                stranger.read_version("user", "notes", "probe", versions[0]),
                NotFoundError,
            )

        assert_payload(listed, history_absent_error(PROBE))
        assert_payload(read, version_absent_error(PROBE, versions[0]))
