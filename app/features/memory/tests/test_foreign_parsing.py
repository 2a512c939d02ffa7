"""The pure readers of other tools' formats: edge cases of each line and field."""

import pytest

from app.features.memory.domain.basic_memory import parse_basic_memory
from app.features.memory.domain.foreign_notes import MalformedSource, Note, decoded
from app.features.memory.domain.mcp_memory import parse_mcp_memory


def note(text: str, relative: str = "dir/A Note.md") -> Note:
    (parsed,) = parse_basic_memory(text, relative)
    return parsed


def test_mcp_lines_as_the_server_may_leave_them() -> None:
    """CRLF endings, blank lines and unknown keys are fine; line breaks in an
    observation become spaces, blank ones go, a relation is listed once and an
    empty relation type reads as relates_to."""
    text = (
        '{"type":"entity","name":"A","entityType":"x\\ny","observations":'
        '["one\\ntwo"," ","three"],"createdAt":"2025-01-01"}\r\n'
        "\n"
        '{"type":"relation","from":"A","to":"B","relationType":"knows"}\r\n'
        '{"type":"relation","from":"A","to":"B","relationType":"knows"}\n'
        '{"type":"relation","from":"A","to":"C","relationType":""}\n'
    )

    (entity,) = parse_mcp_memory(text, "memory.jsonl")

    assert entity == Note(
        name="A",
        content="- [stated] one two\n- [stated] three\n\n## Relations\n"
        "- knows [[B]]\n- relates_to [[C]]\n",
        description="x y",
        aliases=(),
        origin="memory.jsonl line 1",
    )


@pytest.mark.parametrize(
    ("line", "detail"),
    [
        ("[1, 2]", "is not a JSON object"),
        ('{"type":"entity","name":7,"entityType":"x","observations":[]}', "'name'"),
        ('{"type":"entity","name":"A","observations":[]}', "'entityType'"),
        ('{"type":"entity","name":"A","entityType":"x","observations":[1]}', "list"),
        ('{"type":"relation","from":"A","to":"B"}', "'relationType'"),
        ('{"name":"A"}', "not None"),
    ],
)
def test_a_malformed_mcp_line_is_named(line: str, detail: str) -> None:
    with pytest.raises(MalformedSource) as raised:
        parse_mcp_memory(f"\n{line}\n", "memory.json")

    assert raised.value.origin == "memory.json line 2"
    assert detail in raised.value.detail


def test_front_matter_gives_name_description_and_aliases() -> None:
    parsed = note(
        "---\r\ntitle: 2024-01-15\r\ntype: Meeting\r\ntags: 'a, #b, a'\r\n"
        "aliases: [standup]\r\npermalink: meetings/standup\r\n...\r\n\r\n"
        "- [Decision] Ship it\r\n"
    )

    assert (parsed.name, parsed.description, parsed.aliases) == (
        "2024-01-15",
        "Meeting",
        ("meetings/standup", "standup", "a", "b"),
    )
    assert parsed.content == "- [stated] Decision: Ship it\r\n"
    assert parsed.origin == "dir/A Note.md line 2"


def test_without_front_matter_the_file_name_is_the_title() -> None:
    for text in ("- [idea] x\n", "---\n---\n- [idea] x\n"):
        parsed = note(text)
        assert (parsed.name, parsed.description, parsed.aliases) == (
            "A Note",
            "note",
            (),
        )
        assert parsed.content == "- [stated] idea: x\n"


def test_a_permalink_equal_to_the_title_is_no_alias() -> None:
    assert note("---\ntitle: t\npermalink: t\n---\n").aliases == ()


@pytest.mark.parametrize(
    ("line", "becomes"),
    [
        ("- [idea] Plain", "- [stated] idea: Plain"),
        ("* [idea] Star marker", "- [stated] idea: Star marker"),
        ("- [Inferred] Label kept", "- [inferred] Label kept"),
        ("- [a b] Spaced category", "- [stated] a b: Spaced category"),
        ("- [1] Digit category", "- [stated] 1: Digit category"),
        ("- Only a #tag", "- [stated] Only a #tag"),
        ("- [ ] Open task", "- [ ] Open task"),
        ("- [X] Done task", "- [X] Done task"),
        ("- [?] Question", "- [?] Question"),
        ("- [1:02:03.5] Clock", "- [1:02:03.5] Clock"),
        ("- [link](https://example.org) #x", "- [link](https://example.org) #x"),
        ("- [[Target]] #x", "- [[Target]] #x"),
        ("- depends_on [[Target]] #x", "- depends_on [[Target]] #x"),
        ("  - [idea] Nested", "  - [idea] Nested"),
        ("- #", "- #"),
        ("[idea] No marker", "[idea] No marker"),
    ],
)
def test_which_list_items_become_fact_lines(line: str, becomes: str) -> None:
    assert note(f"{line}\n").content == f"{becomes}\n"


def test_fenced_code_is_kept_as_written() -> None:
    text = "```\n- [a] in\n~~~\n- [b] in\n```\n- [c] out\n~~~md\n- [d] in\n~~~\n"

    assert note(text).content.splitlines() == [
        "```",
        "- [a] in",
        "~~~",
        "- [b] in",
        "```",
        "- [stated] c: out",
        "~~~md",
        "- [d] in",
        "~~~",
    ]


@pytest.mark.parametrize(
    ("text", "line", "detail"),
    [
        ("---\ntitle: x\n", 1, "never closed"),
        ("---\n- a\n---\n", 2, "not a mapping"),
        ("---\ntitle: [a, b]\n---\n", 2, "title must be a single value"),
        ("---\ntitle: t\n\ntags: 7\n---\n", 4, "tags must be a list"),
        ("---\ntitle: t\naliases: [[a]]\n---\n", 3, "aliases must be a list"),
        ("---\ntitle: 'open\n---\n", 2, "not YAML"),
    ],
)
def test_malformed_front_matter_is_named(text: str, line: int, detail: str) -> None:
    with pytest.raises(MalformedSource) as raised:
        note(text)

    assert raised.value.origin == f"dir/A Note.md line {line}"
    assert detail in raised.value.detail


def test_bytes_that_are_not_utf8_are_named_by_line() -> None:
    with pytest.raises(MalformedSource) as raised:
        decoded(b"ok\nok\nbad \xff\n", "n.md")

    assert str(raised.value) == "n.md line 3: is not UTF-8 text"
    assert decoded(b"\xef\xbb\xbfok", "n.md") == "ok"
