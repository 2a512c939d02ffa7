"""The memory prompt: its sections, their order, and the limits on every text."""

import re
from dataclasses import replace

import pytest

from app.server.mcp import prompt
from app.server.mcp.prompt import SECTIONS, PromptSlots, build_memory_prompt

SLOTS = PromptSlots(
    purpose="You remember your work in Acme Analytics.",
    scope_guidance="Use `user` for private facts.",
    seed_areas="- `preferences`",
    systems_of_record="The Acme event catalog.",
)
GENERIC_TEXTS = [
    name
    for name, value in vars(prompt).items()
    if name.isupper() and isinstance(value, str)
]


def headings(text: str) -> list[str]:
    return re.findall(r"^## (.+)$", text, flags=re.MULTILINE)


def section(text: str, heading: str) -> str:
    return text.split(f"## {heading}\n\n", 1)[1].split("\n\n## ", 1)[0]


def test_prompt_has_every_section_in_order_with_h2_headings_only() -> None:
    """All eleven `##` headings appear, in SPEC order, and nothing is an H1."""
    text = build_memory_prompt(SLOTS)

    assert headings(text) == list(SECTIONS)
    assert SECTIONS == (
        "Memory",
        "Scopes",
        "Seed areas",
        "Systems of record",
        "Applying memory",
        "Deciding what to remember",
        "What never to store",
        "Filing",
        "Choosing a write tool",
        "Curated content",
        "Forgetting",
    )
    assert not re.search(r"^# ", text, flags=re.MULTILINE)
    assert text.startswith("## Memory\n\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert "\n\n\n" not in text


def test_prompt_omits_systems_of_record_when_the_slot_is_unset() -> None:
    """Without systems of record, that section (principle included) is left out."""
    slots = PromptSlots(purpose="p", scope_guidance="s", seed_areas="a")

    text = build_memory_prompt(slots)

    assert "Systems of record" not in headings(text)
    assert prompt.SYSTEMS_OF_RECORD_PRINCIPLE not in text


def test_prompt_places_the_slots_in_their_sections() -> None:
    """Purpose opens Memory; the other slots are used as given in their sections."""
    text = build_memory_prompt(SLOTS)

    assert section(text, "Memory").startswith(SLOTS.purpose + "\n\n")
    assert "get_memory_index" in section(text, "Memory")
    assert section(text, "Scopes") == SLOTS.scope_guidance
    assert section(text, "Seed areas") == SLOTS.seed_areas
    assert section(text, "Systems of record").endswith(str(SLOTS.systems_of_record))


def test_prompt_is_deterministic() -> None:
    """The same slots always give the same text."""
    assert build_memory_prompt(SLOTS) == build_memory_prompt(SLOTS)


@pytest.mark.parametrize("name", GENERIC_TEXTS)
def test_prompt_text_is_ascii_within_100_columns_and_2500_characters(name: str) -> None:
    """Each section text and default slot is ASCII, <= 100 columns, <= 2500 chars."""
    text: str = getattr(prompt, name)

    assert text.isascii()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert len(text) <= 2500


def test_prompt_generic_texts_are_discovered() -> None:
    """The limits test above really covers the section bodies and default slots."""
    assert {"OVERVIEW", "PRIVACY", "FORGETTING", "DEFAULT_PURPOSE"} <= set(
        GENERIC_TEXTS
    )


def test_prompt_covers_what_never_to_store() -> None:
    """The privacy section names the three things never stored, and shared scopes."""
    body = section(build_memory_prompt(SLOTS), "What never to store")

    for phrase in ("account", "health diagnoses", "minor", "shared"):
        assert phrase in body


def test_prompt_names_every_write_tool_when_choosing_one() -> None:
    """Choosing a write tool covers append, replace, write and delete."""
    body = section(build_memory_prompt(SLOTS), "Choosing a write tool")

    for tool in ("append_line", "replace_fact", "write_file", "delete_file"):
        assert f"`{tool}`" in body


def test_prompt_teaches_the_confidence_labels() -> None:
    """Deciding what to remember defines the labels an agent writes."""
    body = section(build_memory_prompt(SLOTS), "Deciding what to remember")

    for label in ("[stated]", "[observed]", "[inferred]", "[system]"):
        assert label in body


def test_prompt_points_to_history_only_when_its_tools_are_listed() -> None:
    """With history tools, choosing a tool and forgetting mention them; without, not."""
    shown = build_memory_prompt(SLOTS)
    hidden = build_memory_prompt(replace(SLOTS, history=False))

    assert "`restore_version`" in section(shown, "Choosing a write tool")
    assert "history" in section(shown, "Forgetting")
    assert "restore_version" not in hidden and "list_versions" not in hidden
    for heading in ("Choosing a write tool", "Forgetting"):
        assert len(section(shown, heading)) <= 2500
