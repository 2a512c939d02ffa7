"""Conformance of append_line and replace_fact: lines, matches, metadata merges."""

import pytest
from wenchang_client.errors import (
    InvalidArgumentError,
    NotFoundError,
    OversizeWriteError,
    ReplaceFactMatchError,
    VersionConflictError,
)

from app.features.memory.policy.content import (
    require_description,
    require_fact_line,
    require_old_string,
)
from app.shared.errors import (
    memory_not_found_error,
    oversize_write_error,
    replace_fact_match_error,
)
from app.shared.locations import Location

from .harness import (
    MAX_FILE_BYTES,
    SOURCE,
    Harness,
    Transport,
    assert_payload,
    core_error,
    create,
    expect,
)

PROBE = Location("user", "notes", "probe")
FACTS = "- [stated] alpha\n- [stated] beta\n- [stated] alpha\n"
NOT_FACT_LINES = [
    "not a fact",
    "- [stated] a\n- [stated] b",
    "- [stated]  ",
    "-  [stated] two spaces",
    "- [guessed] unknown label",
    "- [stated]x",
]


class EditConformance(Harness):
    @pytest.mark.parametrize(
        "content", ["- [stated] a", "- [stated] a\n"], ids=["bare", "newline"]
    )
    async def test_append_adds_one_line_with_separator_when_needed(
        self, transport: Transport, content: str
    ) -> None:
        """The line follows a newline separator if needed, and ends with one."""
        written = await create(transport, content=content)

        appended = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] b",
            expected_version=written.version,
        )

        assert appended.content == "- [stated] a\n- [stated] b\n"
        assert appended.last_updated >= written.last_updated
        assert appended.sources == [SOURCE]
        assert await transport.read_file("user", "notes", "probe") == appended

    async def test_append_to_empty_file_has_no_leading_separator(
        self, transport: Transport
    ) -> None:
        """An empty body gets just the line and its newline."""
        written = await create(transport, content="")

        appended = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [system] x",
            expected_version=written.version,
        )

        assert appended.content == "- [system] x\n"

    async def test_append_to_absent_file_is_file_absent(
        self, transport: Transport
    ) -> None:
        """append_line never creates a file."""
        raised = await expect(
            transport.append_line(
                "user", "notes", "probe", line="- [stated] b", expected_version="1"
            ),
            NotFoundError,
        )

        assert_payload(raised, memory_not_found_error(PROBE))
        await expect(transport.read_file("user", "notes", "probe"), NotFoundError)

    async def test_append_of_a_non_fact_line_is_invalid(
        self, transport: Transport
    ) -> None:
        """Only one ``- [label] text`` line is accepted; nothing changes."""
        written = await create(transport)

        for line in NOT_FACT_LINES:
            raised = await expect(
                transport.append_line(
                    "user",
                    "notes",
                    "probe",
                    line=line,
                    expected_version=written.version,
                ),
                InvalidArgumentError,
            )

            assert_payload(raised, core_error(require_fact_line, line), repr(line))
        assert await transport.read_file("user", "notes", "probe") == written

    async def test_concurrent_appends_one_lands_one_conflicts(
        self, transport: Transport
    ) -> None:
        """Two appends at one version: the second conflicts, retries, lands once."""
        written = await create(transport, content="")
        first = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] one",
            expected_version=written.version,
        )

        raised = await expect(
            transport.append_line(
                "user",
                "notes",
                "probe",
                line="- [stated] two",
                expected_version=written.version,
            ),
            VersionConflictError,
        )
        retried = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] two",
            expected_version=raised.version,
        )

        assert (raised.content, raised.version) == (first.content, first.version)
        assert retried.content == "- [stated] one\n- [stated] two\n"

    async def test_oversize_append_is_rejected(self, transport: Transport) -> None:
        """The limit applies to the resulting body, counted in UTF-8 bytes."""
        written = await create(transport, content="é" * 120)
        line = "- [stated] " + "日" * 10

        raised = await expect(
            transport.append_line(
                "user", "notes", "probe", line=line, expected_version=written.version
            ),
            OversizeWriteError,
        )

        size = len(("é" * 120 + "\n" + line + "\n").encode())
        assert_payload(raised, oversize_write_error(PROBE, size, MAX_FILE_BYTES))
        assert await transport.read_file("user", "notes", "probe") == written

    async def test_append_adds_new_aliases_in_order(self, transport: Transport) -> None:
        """Aliases are added, never removed, with no duplicates added."""
        written = await create(transport)

        appended = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] b",
            expected_version=written.version,
            aliases=["y", "z", "w", "z"],
        )

        assert appended.aliases == ["x", "y", "z", "w"]
        assert appended.description == "d"

    async def test_append_replaces_a_given_description(
        self, transport: Transport
    ) -> None:
        """A description passed to append_line replaces the stored one."""
        written = await create(transport)

        appended = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] b",
            expected_version=written.version,
            description="d2",
        )

        assert (appended.description, appended.aliases) == ("d2", ["x", "y"])

    async def test_omitted_aliases_and_description_leave_metadata(
        self, transport: Transport
    ) -> None:
        """Neither append_line nor replace_fact touches metadata it was not given."""
        written = await create(transport, content=FACTS)

        appended = await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] c",
            expected_version=written.version,
        )
        replaced = await transport.replace_fact(
            "user",
            "notes",
            "probe",
            old_string="beta",
            new_string="gamma",
            expected_version=appended.version,
        )

        for result in (appended, replaced):
            assert (result.description, result.aliases) == ("d", ["x", "y"])

    async def test_replace_fact_replaces_the_unique_match(
        self, transport: Transport
    ) -> None:
        """A unique old_string is replaced; every other byte stays."""
        written = await create(transport, content=FACTS)

        replaced = await transport.replace_fact(
            "user",
            "notes",
            "probe",
            old_string="beta",
            new_string="gamma",
            expected_version=written.version,
        )

        assert replaced.content == FACTS.replace("beta", "gamma")
        assert await transport.read_file("user", "notes", "probe") == replaced

    @pytest.mark.parametrize(
        ("old_string", "count"),
        [("delta", 0), ("alpha", 2), ("aa", 2)],
        ids=["none", "two", "overlapping"],
    )
    async def test_replace_fact_without_a_unique_match_is_rejected(
        self, transport: Transport, old_string: str, count: int
    ) -> None:
        """0 or several matches (overlaps count) carry content, version, count."""
        content = FACTS + "- [stated] aaa\n" if old_string == "aa" else FACTS
        written = await create(transport, content=content)

        raised = await expect(
            transport.replace_fact(
                "user",
                "notes",
                "probe",
                old_string=old_string,
                new_string="x",
                expected_version=written.version,
            ),
            ReplaceFactMatchError,
        )

        expected = replace_fact_match_error(PROBE, content, written.version, count)
        assert_payload(raised, expected)
        assert (raised.content, raised.version, raised.match_count) == (
            content,
            written.version,
            count,
        )

    async def test_replace_fact_reapplies_a_unique_match_at_a_stale_version(
        self, transport: Transport
    ) -> None:
        """A stale version is forgiven while old_string still matches once."""
        written = await create(transport, content=FACTS)
        await transport.append_line(
            "user",
            "notes",
            "probe",
            line="- [stated] d",
            expected_version=written.version,
            aliases=["w"],
        )

        replaced = await transport.replace_fact(
            "user",
            "notes",
            "probe",
            old_string="beta",
            new_string="zeta",
            expected_version=written.version,
            aliases=["z"],
        )

        assert replaced.content == FACTS.replace("beta", "zeta") + "- [stated] d\n"
        assert replaced.aliases == ["x", "y", "w", "z"]

    async def test_replace_fact_at_a_stale_version_without_unique_match_conflicts(
        self, transport: Transport
    ) -> None:
        """Stale and no longer unique is a VersionConflictError, not a match error."""
        written = await create(transport, content=FACTS)
        changed = await transport.replace_fact(
            "user",
            "notes",
            "probe",
            old_string="beta",
            new_string="alpha",
            expected_version=written.version,
        )

        raised = await expect(
            transport.replace_fact(
                "user",
                "notes",
                "probe",
                old_string="alpha",
                new_string="x",
                expected_version=written.version,
            ),
            VersionConflictError,
        )

        assert (raised.content, raised.version) == (changed.content, changed.version)

    async def test_replace_fact_with_empty_new_string_deletes_the_span(
        self, transport: Transport
    ) -> None:
        """An empty new_string removes the quoted text, line break included."""
        written = await create(transport, content=FACTS)

        replaced = await transport.replace_fact(
            "user",
            "notes",
            "probe",
            old_string="- [stated] beta\n",
            new_string="",
            expected_version=written.version,
        )

        assert replaced.content == "- [stated] alpha\n- [stated] alpha\n"

    async def test_replace_fact_with_empty_old_string_is_invalid(
        self, transport: Transport
    ) -> None:
        """old_string must be non-empty; nothing changes."""
        written = await create(transport, content=FACTS)

        raised = await expect(
            transport.replace_fact(
                "user",
                "notes",
                "probe",
                old_string="",
                new_string="x",
                expected_version=written.version,
            ),
            InvalidArgumentError,
        )

        assert_payload(raised, core_error(require_old_string, ""))
        assert await transport.read_file("user", "notes", "probe") == written

    async def test_oversize_replace_fact_is_rejected(
        self, transport: Transport
    ) -> None:
        """The limit applies to the edited body."""
        content = "- [stated] anchor\n" + "x" * (MAX_FILE_BYTES - 20) + "\n"
        written = await create(transport, content=content)

        raised = await expect(
            transport.replace_fact(
                "user",
                "notes",
                "probe",
                old_string="anchor",
                new_string="日" * 6,
                expected_version=written.version,
            ),
            OversizeWriteError,
        )

        size = len(content.replace("anchor", "日" * 6).encode())
        assert_payload(raised, oversize_write_error(PROBE, size, MAX_FILE_BYTES))
        assert await transport.read_file("user", "notes", "probe") == written

    async def test_replace_fact_adds_aliases_and_replaces_description(
        self, transport: Transport
    ) -> None:
        """replace_fact merges aliases like append_line and replaces description."""
        written = await create(transport, content=FACTS)

        replaced = await transport.replace_fact(
            "user",
            "notes",
            "probe",
            old_string="beta",
            new_string="zeta",
            expected_version=written.version,
            aliases=["y", "z", "z"],
            description="d2",
        )

        assert (replaced.aliases, replaced.description) == (["x", "y", "z"], "d2")

    async def test_multi_line_description_is_invalid(
        self, transport: Transport
    ) -> None:
        """A description is one line on every write; nothing changes."""
        written = await create(transport, content=FACTS)
        calls = {
            "write": lambda: transport.write_file(
                "user",
                "notes",
                "probe",
                content="",
                description="a\nb",
                aliases=[],
                expected_version=written.version,
            ),
            "append": lambda: transport.append_line(
                "user",
                "notes",
                "probe",
                line="- [stated] c",
                expected_version=written.version,
                description="a\nb",
            ),
            "replace": lambda: transport.replace_fact(
                "user",
                "notes",
                "probe",
                old_string="beta",
                new_string="c",
                expected_version=written.version,
                description="a\nb",
            ),
        }

        for operation, call in calls.items():
            raised = await expect(call(), InvalidArgumentError)

            assert_payload(raised, core_error(require_description, "a\nb"), operation)
        assert await transport.read_file("user", "notes", "probe") == written
