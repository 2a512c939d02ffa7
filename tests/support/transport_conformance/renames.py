"""Conformance of rename_file on every transport: the move, its history, refusals."""

from wenchang_client.errors import (
    NotFoundError,
    RestrictedScopeError,
    VersionConflictError,
)

from app.shared.errors import (
    memory_not_found_error,
    system_read_only_error,
    version_conflict_error,
)
from app.shared.locations import Location

from .harness import (
    SOURCE,
    Harness,
    Transport,
    assert_payload,
    create,
    expect,
)

MOVED = Location("user", "projects", "moved")


async def rename(transport: Transport, version: str, *, to: Location = MOVED) -> object:
    return await transport.rename_file(
        "user",
        "notes",
        "probe",
        new_area=to.area,
        new_name=to.name,
        expected_version=version,
    )


class RenameConformance(Harness):
    async def test_rename_moves_the_file_and_its_history(
        self, transport: Transport
    ) -> None:
        created = await create(transport)

        moved = await transport.rename_file(
            "user",
            "notes",
            "probe",
            new_area="projects",
            new_name="moved",
            expected_version=created.version,
        )

        assert (moved.area, moved.name, moved.content) == (
            "projects",
            "moved",
            created.content,
        )
        assert (moved.description, moved.aliases) == (
            created.description,
            created.aliases,
        )
        assert moved.version != created.version
        assert await transport.read_file("user", "projects", "moved") == moved
        raised = await expect(
            transport.read_file("user", "notes", "probe"), NotFoundError
        )
        assert_payload(
            raised, memory_not_found_error(Location("user", "notes", "probe"))
        )
        page = await transport.list_versions("user", "projects", "moved")
        assert [(e.operation, e.actor) for e in page.entries] == [
            ("rename_file", SOURCE),
            ("write_file", SOURCE),
        ]

    async def test_rename_onto_an_existing_file_is_a_conflict_naming_it(
        self, transport: Transport
    ) -> None:
        created = await create(transport)
        there = await create(transport, "moved", "- [stated] b\n", area="projects")

        raised = await expect(rename(transport, created.version), VersionConflictError)

        assert_payload(
            raised, version_conflict_error(MOVED, there.content, there.version)
        )
        assert await transport.read_file("user", "notes", "probe") == created

    async def test_rename_with_a_stale_version_is_a_conflict(
        self, transport: Transport
    ) -> None:
        created = await create(transport)
        current = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] b",
            expected_version=created.version,
        )

        raised = await expect(rename(transport, created.version), VersionConflictError)

        where = Location("user", "notes", "probe")
        assert_payload(
            raised, version_conflict_error(where, current.content, current.version)
        )

    async def test_rename_into_system_is_refused(self, transport: Transport) -> None:
        created = await create(transport)
        to = Location("user", "system", "moved")

        raised = await expect(
            rename(transport, created.version, to=to), RestrictedScopeError
        )

        assert_payload(raised, system_read_only_error(to))
        assert await transport.read_file("user", "notes", "probe") == created
