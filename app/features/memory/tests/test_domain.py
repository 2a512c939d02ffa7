from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.features.memory.domain import (
    appended,
    count_matches,
    decode_cursor,
    encode_cursor,
    format_timestamp,
    is_fact_line,
    merged_aliases,
    parse_timestamp,
    with_source,
)


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(2026, 9, 25, 19, 21, 38, tzinfo=UTC), "2026-09-25T19:21:38Z"),
        (
            datetime(2026, 9, 25, 19, 21, 38, 123456, tzinfo=UTC),
            "2026-09-25T19:21:38.123456Z",
        ),
        (
            datetime(2026, 9, 25, 19, 21, 38, 5, tzinfo=UTC),
            "2026-09-25T19:21:38.000005Z",
        ),
        (
            datetime(2026, 9, 25, 21, 21, 38, tzinfo=timezone(timedelta(hours=2))),
            "2026-09-25T19:21:38Z",
        ),
    ],
    ids=["whole-second", "micro", "leading-zero-micro", "offset"],
)
def test_format_timestamp_is_utc_with_z_and_micros_only_when_set(
    moment: datetime, text: str
) -> None:
    """`YYYY-MM-DDTHH:MM:SSZ`, with six fractional digits only when non-zero."""
    assert format_timestamp(moment) == text


@pytest.mark.parametrize(
    "text",
    ["2026-09-25T19:21:38.000005Z", "2026-09-25T21:21:38.000005+02:00"],
    ids=["z", "offset"],
)
def test_parse_timestamp_gives_the_utc_moment(text: str) -> None:
    """Any offset is read as the same UTC moment, which formats back canonically."""
    moment = parse_timestamp(text)

    assert moment.tzinfo is UTC
    assert format_timestamp(moment) == "2026-09-25T19:21:38.000005Z"


def test_parse_timestamp_refuses_a_moment_without_offset() -> None:
    with pytest.raises(ValueError, match="no UTC offset"):
        parse_timestamp("2026-09-25T19:21:38")


@pytest.mark.parametrize(
    ("line", "valid"),
    [
        ("- [stated] Prefers tea", True),
        ("- [observed] x", True),
        ("- [inferred] x", True),
        ("- [system] x", True),
        ("- [stated] ", False),
        ("- [stated]\tx", False),
        ("- [other] x", False),
        ("- [stated] a\nb", False),
    ],
)
def test_is_fact_line_accepts_only_labelled_single_lines(
    line: str, valid: bool
) -> None:
    """A fact line is `- [label] text`, one of four labels, non-blank, one line."""
    assert is_fact_line(line) is valid


@pytest.mark.parametrize(
    ("content", "result"),
    [("", "L\n"), ("a", "a\nL\n"), ("a\n", "a\nL\n"), ("a\n\n", "a\n\nL\n")],
)
def test_appended_adds_a_separator_only_when_missing(content: str, result: str) -> None:
    """The line follows a `\\n` only when the content lacks one, and ends with one."""
    assert appended(content, "L") == result


@pytest.mark.parametrize(
    ("content", "needle", "count"),
    [("aaa", "aa", 2), ("aaaa", "aa", 3), ("abc", "x", 0), ("abcabc", "abc", 2)],
)
def test_count_matches_counts_overlapping_occurrences(
    content: str, needle: str, count: int
) -> None:
    """Every start index counts, so overlaps are matches too."""
    assert count_matches(content, needle) == count


def test_merged_aliases_keeps_stored_order_and_adds_only_new_ones() -> None:
    """Stored duplicates stay; given duplicates and known aliases are dropped."""
    assert merged_aliases(("x", "x", "y"), ["z", "y", "z", "w"]) == (
        "x",
        "x",
        "y",
        "z",
        "w",
    )


def test_with_source_is_a_sorted_set() -> None:
    """Sources only grow and render sorted without duplicates."""
    assert with_source(("mcp", "cli"), "http") == ("cli", "http", "mcp")
    assert with_source(("http",), "http") == ("http",)


def test_cursor_round_trips_only_for_its_own_listing_and_key() -> None:
    """A cursor decodes for the listing and key that issued it, and nothing else."""
    cursor = encode_cursor(b"k", "user/alice/", "notes/a.md")

    assert decode_cursor(b"k", "user/alice/", cursor) == "notes/a.md"
    assert decode_cursor(b"k", "user/bob/", cursor) is None
    assert decode_cursor(b"other", "user/alice/", cursor) is None
    assert "alice" not in cursor
