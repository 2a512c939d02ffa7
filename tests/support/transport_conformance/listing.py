"""Conformance of list_prefix (pages, cursors) and get_memory_index (order, budget)."""

import base64
import binascii
from collections import Counter
from datetime import datetime

import pytest
from wenchang_client.errors import InvalidArgumentError

from app.features.memory.domain import entry_cost
from app.features.memory.schemas import CappedArea, FileEntry, MemoryIndex
from app.shared.errors import GUIDANCE, Category
from app.shared.identity import Identity

from .harness import (
    INDEX_MAX_BYTES,
    LIST_PAGE_SIZE,
    SCOPE_PRIORITY,
    Connect,
    Harness,
    Transport,
    cost_of,
    create,
    entry_of,
    expect,
)

LAYOUT = [
    ("notes", "b"),
    ("zeta", "z"),
    ("notes", "a"),
    ("alpha", "c"),
    ("notes", "a-b"),
]
"""Written in this order; listed as alpha/c, notes/a-b, notes/a, notes/b, zeta/z."""


async def pages(
    transport: Transport, scope: str, area: str | None = None
) -> list[list[FileEntry]]:
    """Every page of a listing, following next_cursor to the end."""
    result: list[list[FileEntry]] = []
    cursor: str | None = None
    while True:
        page = await transport.list_prefix(scope, area, cursor)
        result.append(page.entries)
        if page.next_cursor is None:
            return result
        cursor = page.next_cursor


async def every_entry(transport: Transport) -> list[FileEntry]:
    scopes = ("user", "org", "project", "team")
    return [e for s in scopes for page in await pages(transport, s) for e in page]


def index_order(entries: list[FileEntry]) -> list[FileEntry]:
    """system/ first, then scope_priority tiers, then the rest as one tier."""

    def rank(entry: FileEntry) -> tuple[int, float, str]:
        if entry.area == "system":
            tier = 0
        elif entry.scope in SCOPE_PRIORITY:
            tier = 1 + SCOPE_PRIORITY.index(entry.scope)
        else:
            tier = 1 + len(SCOPE_PRIORITY)
        moment = datetime.fromisoformat(entry.last_updated).timestamp()
        return tier, -moment, f"{entry.scope}/{entry.area}/{entry.name}.md"

    return sorted(entries, key=rank)


def budgeted(entries: list[FileEntry]) -> MemoryIndex:
    """The index docs/concepts.md prescribes for ``entries`` under INDEX_MAX_BYTES."""
    kept: list[FileEntry] = []
    omitted: Counter[tuple[str, str]] = Counter()
    total = 0
    for entry in index_order(entries):
        cost = entry_cost(entry)
        if not omitted and total + cost <= INDEX_MAX_BYTES:
            kept.append(entry)
            total += cost
        else:
            omitted[(entry.scope, entry.area)] += 1
    capped = [
        CappedArea(scope=s, area=a, omitted=n) for (s, a), n in sorted(omitted.items())
    ]
    return MemoryIndex(entries=kept, capped=capped)


def decoded_parts(cursor: str) -> str:
    text = cursor
    for part in cursor.split("."):
        try:
            text += base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode(
                errors="replace"
            )
        except (binascii.Error, ValueError):
            continue
    return text


class ListingConformance(Harness):
    async def test_list_prefix_pages_a_scope_in_key_order(
        self, transport: Transport
    ) -> None:
        """Pages of list_page_size, ascending by area/name.md, then no cursor."""
        for area, name in LAYOUT:
            await create(transport, name, area=area)

        listed = await pages(transport, "user")

        assert [len(page) for page in listed] == [2, 2, 1]
        keys = [(e.area, e.name) for page in listed for e in page]
        assert keys == [
            ("alpha", "c"),
            ("notes", "a-b"),
            ("notes", "a"),
            ("notes", "b"),
            ("zeta", "z"),
        ]

    async def test_list_prefix_of_an_area_lists_only_that_area(
        self, transport: Transport
    ) -> None:
        """An area listing is the area's slice of the scope listing."""
        for area, name in LAYOUT:
            await create(transport, name, area=area)

        listed = await pages(transport, "user", "notes")

        assert [(e.area, e.name) for page in listed for e in page] == [
            ("notes", "a-b"),
            ("notes", "a"),
            ("notes", "b"),
        ]

    async def test_a_full_last_page_has_no_cursor(self, transport: Transport) -> None:
        """Exactly list_page_size files make one page with next_cursor None."""
        for i in range(LIST_PAGE_SIZE):
            await create(transport, f"f{i}")

        page = await transport.list_prefix("user", "notes")

        assert (len(page.entries), page.next_cursor) == (LIST_PAGE_SIZE, None)

    async def test_entries_are_the_files_without_content(
        self, transport: Transport
    ) -> None:
        """A listed entry equals the file's metadata and version."""
        written = await create(transport)

        page = await transport.list_prefix("user")

        assert page.entries == [entry_of(written)]
        assert page.next_cursor is None

    async def test_a_cursor_can_be_reused(self, transport: Transport) -> None:
        """The same cursor lists the same page again; an empty one starts over."""
        for area, name in LAYOUT:
            await create(transport, name, area=area)
        first = await transport.list_prefix("user")
        assert first.next_cursor is not None

        again = await transport.list_prefix("user", None, first.next_cursor)
        twice = await transport.list_prefix("user", None, first.next_cursor)
        restart = await transport.list_prefix("user", None, "")

        assert again == twice
        assert restart == first

    async def test_cursors_are_bound_to_their_listing(
        self, connect: Connect, transport: Transport, identity: Identity
    ) -> None:
        """Malformed or foreign cursors (area, scope, entity) are invalid."""
        for area, name in LAYOUT:
            await create(transport, name, area=area)
            await create(transport, name, area=area, scope="project")
        cursor = (await transport.list_prefix("user")).next_cursor
        assert cursor is not None
        async with connect(Identity(grants={"user": identity.grants["user"]})) as peer:
            assert (await peer.list_prefix("user", None, cursor)).entries
        stranger = connect(
            Identity(grants={"user": identity.grants["project"]}, label="x")
        )

        calls = [
            transport.list_prefix("user", None, "!!!"),
            transport.list_prefix("user", "notes", cursor),
            transport.list_prefix("project", None, cursor),
        ]
        errors = [await expect(call, InvalidArgumentError) for call in calls]
        async with stranger as other:
            errors.append(
                await expect(
                    other.list_prefix("user", None, cursor), InvalidArgumentError
                )
            )

        for raised in errors:
            assert raised.argument == "cursor"
            assert raised.message.endswith(GUIDANCE[Category.RECOVERABLE])

    async def test_cursors_reveal_no_entity_id(
        self, transport: Transport, identity: Identity
    ) -> None:
        """A cursor neither contains nor decodes to the entity id or a key."""
        for area, name in LAYOUT:
            await create(transport, name, area=area)

        cursor = (await transport.list_prefix("user")).next_cursor

        assert cursor is not None
        assert identity.grants["user"].entity_id not in decoded_parts(cursor)

    async def test_index_fans_out_over_every_granted_scope(
        self, transport: Transport
    ) -> None:
        """Files of every scope appear once, without content; capped is empty."""
        written = [
            await create(transport, "u", scope="user"),
            await create(transport, "o", scope="org"),
            await create(transport, "p", scope="project"),
        ]

        index = await transport.get_memory_index()

        assert sorted(index.entries, key=lambda e: e.scope) == sorted(
            map(entry_of, written), key=lambda e: e.scope
        )
        assert index.capped == []

    async def test_index_orders_priority_tiers_then_newest_first(
        self, transport: Transport
    ) -> None:
        """user, then org (scope_priority), then project; newest first in each."""
        for round_ in range(2):
            for scope in ("project", "org", "user"):
                await create(transport, f"{scope}-{round_}", scope=scope)

        index = await transport.get_memory_index()

        assert index.entries == index_order(await every_entry(transport))
        assert [e.scope for e in index.entries] == [
            "user",
            "user",
            "org",
            "org",
            "project",
            "project",
        ]

    async def test_index_budget_keeps_a_prefix_and_counts_the_rest(
        self, transport: Transport
    ) -> None:
        """Entries are kept while the running cost fits; the rest is capped."""
        for i in range(6):
            await create(transport, f"u{i}", description="u" * 700)
        await create(transport, "o", scope="org", area="later", description="o" * 50)

        index = await transport.get_memory_index()

        assert index == budgeted(await every_entry(transport))
        assert sum(map(entry_cost, index.entries)) <= INDEX_MAX_BYTES
        assert index.capped[-1] == CappedArea(scope="user", area="notes", omitted=2)

    @pytest.mark.parametrize("excess", [0, 1], ids=["exact", "one-over"])
    async def test_index_budget_is_inclusive(
        self, transport: Transport, excess: int
    ) -> None:
        """An entry costing exactly the budget fits; one byte more does not."""
        file = await create(transport, description="")
        for _ in range(3):
            padding = INDEX_MAX_BYTES + excess - cost_of(file) + len(file.description)
            file = await transport.write_file(
                "user",
                "notes",
                "probe",
                content="",
                description="d" * padding,
                aliases=[],
                expected_version=file.version,
            )
            if cost_of(file) == INDEX_MAX_BYTES + excess:
                break

        index = await transport.get_memory_index()

        assert cost_of(file) == INDEX_MAX_BYTES + excess
        if excess:
            assert index.entries == []
            assert index.capped == [CappedArea(scope="user", area="notes", omitted=1)]
        else:
            assert (index.entries, index.capped) == ([entry_of(file)], [])
