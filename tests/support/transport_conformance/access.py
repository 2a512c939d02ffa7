"""Conformance of who may do what: grants, roles, system/, paths, check order."""

import itertools
from collections.abc import Awaitable, Callable

from wenchang_client.errors import (
    FileQuotaExceededError,
    InvalidArgumentError,
    NotFoundError,
    ResolverFailureError,
    RestrictedScopeError,
    VersionConflictError,
    WenchangError,
)

from app.features.memory.policy import locate_file, require_grant
from app.shared.errors import (
    file_quota_exceeded_error,
    role_required_error,
    system_read_only_error,
)
from app.shared.identity import Identity
from app.shared.locations import Location

from .harness import (
    MAX_FILE_BYTES,
    MAX_FILES_PER_ENTITY,
    Connect,
    Harness,
    Transport,
    assert_payload,
    conformance_identity,
    core_error,
    create,
    expect,
)

type Operation = Callable[[Transport, str, str, str], Awaitable[object]]

OPERATIONS: dict[str, Operation] = {
    "read": lambda t, s, a, n: t.read_file(s, a, n),
    "write": lambda t, s, a, n: t.write_file(
        s, a, n, content="", description="", aliases=[], expected_version=None
    ),
    "append": lambda t, s, a, n: t.append_line(
        s, a, n, line="- [stated] a", expected_version="1"
    ),
    "replace": lambda t, s, a, n: t.replace_fact(
        s, a, n, old_string="a", new_string="b", expected_version="1"
    ),
    "delete": lambda t, s, a, n: t.delete_file(s, a, n, expected_version="1"),
}
MUTATIONS = ["write", "append", "replace", "delete"]
BAD_AREAS = ["Notes", "a b", "-x", "a.b", "ü"]
BAD_NAMES = [
    "..",
    ".",
    "a\\b",
    "bell\x07",
    "zero\u200bwidth",
    "line\u2028sep",
    "\ufdd0",
]


class AccessConformance(Harness):
    async def test_ungranted_scope_is_invalid_and_names_available_scopes(
        self, transport: Transport, identity: Identity
    ) -> None:
        """A scope outside the grants is InvalidArgumentError(scope) everywhere."""
        expected = core_error(require_grant, identity, "nope")

        for operation, call in OPERATIONS.items():
            raised = await expect(
                call(transport, "nope", "notes", "probe"), InvalidArgumentError
            )

            assert_payload(raised, expected, operation)
            assert "available scopes: org, project, team, user" in raised.message

    async def test_ungranted_scope_cannot_be_listed(
        self, transport: Transport, identity: Identity
    ) -> None:
        """list_prefix checks the grant like every other operation."""
        raised = await expect(transport.list_prefix("nope"), InvalidArgumentError)

        assert_payload(raised, core_error(require_grant, identity, "nope"))

    async def test_area_must_be_a_lowercase_slug(
        self, transport: Transport, identity: Identity
    ) -> None:
        """A bad area is InvalidArgumentError(area) on reads and writes."""
        for operation, area in itertools.product(["read", "write"], BAD_AREAS):
            call = OPERATIONS[operation](transport, "user", area, "probe")

            raised = await expect(call, InvalidArgumentError)

            expected = core_error(locate_file, identity, "user", area, "probe")
            assert_payload(raised, expected, f"{operation} area={area!r}")

    async def test_name_characters_are_checked(
        self, transport: Transport, identity: Identity
    ) -> None:
        """Dot segments, separators, controls, format chars, noncharacters: name."""
        for operation, name in itertools.product(
            ["read", "write", "delete"], BAD_NAMES
        ):
            call = OPERATIONS[operation](transport, "user", "notes", name)

            raised = await expect(call, InvalidArgumentError)

            expected = core_error(locate_file, identity, "user", "notes", name)
            assert_payload(raised, expected, f"{operation} name={name!r}")

    async def test_checks_run_in_spec_order(self, transport: Transport) -> None:
        """Grant, then path segments, then area slug, then name characters."""
        calls = [
            transport.read_file("nope", "Bad", "bell\x07"),
            transport.read_file("user", "Bad", "bell\x07"),
            transport.read_file("user", "Bad", "zero\u200bwidth"),
        ]

        raised = [await expect(call, InvalidArgumentError) for call in calls]

        assert [error.argument for error in raised] == ["scope", "name", "area"]

    async def test_system_area_is_read_only(self, transport: Transport) -> None:
        """Every mutation of system/ is RestrictedScopeError(system_read_only)."""
        expected = system_read_only_error(Location("user", "system", "probe"))

        for operation in MUTATIONS:
            call = OPERATIONS[operation](transport, "user", "system", "probe")

            raised = await expect(call, RestrictedScopeError)

            assert_payload(raised, expected, operation)
            assert raised.reason == "system_read_only"

    async def test_system_area_is_readable(self, transport: Transport) -> None:
        """Reading system/ is allowed: an absent curated file is just absent."""
        raised = await expect(
            transport.read_file("user", "system", "probe"), NotFoundError
        )

        assert raised.reason == "file_absent"

    async def test_name_is_checked_before_write_permission(
        self, transport: Transport
    ) -> None:
        """A bad name in system/ is reported as the name, not the restriction."""
        await expect(
            OPERATIONS["write"](transport, "user", "system", ".."), InvalidArgumentError
        )

    async def test_write_permission_is_checked_before_remaining_arguments(
        self, transport: Transport
    ) -> None:
        """Oversize content or a bad line in system/ is still RestrictedScopeError."""
        oversize = transport.write_file(
            "user",
            "system",
            "probe",
            content="x" * (MAX_FILE_BYTES + 1),
            description="",
            aliases=[],
            expected_version=None,
        )
        bad_line = transport.append_line(
            "user", "system", "probe", line="no", expected_version="1"
        )

        await expect(oversize, RestrictedScopeError)
        await expect(bad_line, RestrictedScopeError)

    async def test_role_gated_scope_requires_a_permitted_role(
        self, transport: Transport
    ) -> None:
        """Writes to team (member; admin required) are role_required."""
        expected = role_required_error(Location("team", "notes", "probe"), ["admin"])

        for operation in MUTATIONS:
            call = OPERATIONS[operation](transport, "team", "notes", "probe")

            raised = await expect(call, RestrictedScopeError)

            assert_payload(raised, expected, operation)
            assert raised.required_roles == ("admin",)

    async def test_reads_are_never_role_gated(self, transport: Transport) -> None:
        """The role-gated scope is still readable and listable."""
        listing = await transport.list_prefix("team")
        raised = await expect(
            transport.read_file("team", "notes", "probe"), NotFoundError
        )

        assert listing.entries == []
        assert raised.reason == "file_absent"

    async def test_permitted_role_writes_a_gated_scope(
        self, transport: Transport
    ) -> None:
        """org requires admin or owner; this identity is owner there."""
        written = await create(transport, scope="org")

        assert written.scope == "org"

    async def test_quota_stops_creates_at_the_cap(self, transport: Transport) -> None:
        """At max_files_per_entity a create fails; replacing still works."""
        files = [await create(transport, f"f{i}") for i in range(MAX_FILES_PER_ENTITY)]

        raised = await expect(create(transport, "extra"), FileQuotaExceededError)
        replaced = await transport.write_file(
            "user",
            "notes",
            "f0",
            content="- [stated] b\n",
            description="",
            aliases=[],
            expected_version=files[0].version,
        )

        expected = file_quota_exceeded_error(
            Location("user", "notes", "extra"), MAX_FILES_PER_ENTITY
        )
        assert_payload(raised, expected)
        assert raised.limit == MAX_FILES_PER_ENTITY
        assert replaced.content == "- [stated] b\n"
        await create(transport, "other-scope", scope="project")

    async def test_create_of_an_existing_file_at_the_cap_conflicts(
        self, transport: Transport
    ) -> None:
        """At the cap, creating an existing file reports its current state."""
        for i in range(MAX_FILES_PER_ENTITY):
            await create(transport, f"f{i}")

        raised = await expect(create(transport, "f0"), VersionConflictError)

        assert raised.content == "- [stated] a\n"

    async def test_unresolved_credentials_are_a_resolver_failure(
        self, connect: Connect
    ) -> None:
        """Without a resolvable identity every operation is ResolverFailureError."""
        async with connect(None) as stranger:
            raised = await expect(stranger.get_memory_index(), ResolverFailureError)
            await expect(create(stranger), ResolverFailureError)

        assert raised.category == "permanent"

    async def test_entities_are_isolated_by_identity(
        self, connect: Connect, transport: Transport
    ) -> None:
        """Another identity with the same scope names sees none of these files."""
        await create(transport)

        async with connect(conformance_identity()) as other:
            index = await other.get_memory_index()
            listing = await other.list_prefix("user")
            await expect(other.read_file("user", "notes", "probe"), NotFoundError)

        assert (index.entries, listing.entries) == ([], [])

    async def test_entity_ids_never_appear_in_results_or_errors(
        self, transport: Transport, identity: Identity
    ) -> None:
        """No result, cursor or error payload reveals an entity id."""
        for i in range(3):
            await create(transport, f"f{i}")
        seen: list[object] = [
            await transport.get_memory_index(),
            await transport.list_prefix("user"),
            await transport.read_file("user", "notes", "f0"),
        ]
        for call in (create(transport, "f0"), transport.read_file("user", "x", "y")):
            try:
                await call
            except WenchangError as exc:
                seen.append((exc.message, exc.details))

        text = repr(seen)
        for grant in identity.grants.values():
            assert grant.entity_id not in text
