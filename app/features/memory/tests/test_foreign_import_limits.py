"""Basic Memory notes at the bounds a file's metadata has, and how their fields
read: aliases, tags, dates, untitled observations, and what history records."""

import json
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import file_key
from app.features.memory.policy.content import METADATA_BUDGET_BYTES
from app.features.memory.policy.foreign_imports import (
    MAX_ALIAS_CHARS,
    MAX_ALIASES,
    MAX_NAME_CHARS,
)
from app.features.memory.use_cases.import_basic_memory import import_basic_memory
from app.server.context import AppContext
from app.shared.errors import invalid_argument

from .conftest import make_context, snapshot
from .foreign_samples import basic, read


def note(root: Path, front: str, body: str = "- [idea] Tea.\n") -> Path:
    (root / "Tea.md").write_text(f"---\n{front}\n---\n{body}")
    return root


def tags(*names: str) -> str:
    return "tags: " + json.dumps(list(names))


async def imported(root: Path) -> AppContext:
    context = make_context(surface="task")
    await import_basic_memory(basic(root, dry_run=False), context)
    return context


async def refused(root: Path) -> AppError:
    context = make_context(surface="task")
    with pytest.raises(AppError) as raised:
        await import_basic_memory(basic(root, dry_run=False), context)
    assert await snapshot(context.storage) == []
    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "path"
    return raised.value


async def test_as_many_aliases_as_a_write_may_have_are_imported(tmp_path: Path) -> None:
    many = [f"t{i}" for i in range(MAX_ALIASES)]
    context = await imported(note(tmp_path, tags(*many)))

    _, _, aliases = await read(context, "notes", "Tea")

    assert aliases == many


async def test_one_alias_more_is_refused_naming_the_note(tmp_path: Path) -> None:
    many = [f"t{i}" for i in range(MAX_ALIASES + 1)]

    error = await refused(note(tmp_path, tags(*many)))

    assert f"Tea.md: it has {MAX_ALIASES + 1} aliases" in str(error)
    assert f"at most {MAX_ALIASES} of at most {MAX_ALIAS_CHARS} characters" in str(
        error
    )


async def test_an_alias_of_the_longest_length_is_imported(tmp_path: Path) -> None:
    context = await imported(note(tmp_path, tags("a" * MAX_ALIAS_CHARS)))

    _, _, aliases = await read(context, "notes", "Tea")

    assert aliases == ["a" * MAX_ALIAS_CHARS]


async def test_an_alias_one_character_longer_is_refused(tmp_path: Path) -> None:
    error = await refused(note(tmp_path, tags("a" * (MAX_ALIAS_CHARS + 1))))

    assert "it has 1 aliases" in str(error)


def at_budget(extra: int) -> str:
    """Front matter whose description and aliases take the budget plus ``extra``."""
    aliased = [f"{i:03}" + "a" * 400 for i in range(4)]
    used = len(json.dumps(aliased).encode())
    description = "d" * (METADATA_BUDGET_BYTES - used + extra)
    return f"description: {description}\n{tags(*aliased)}"


async def test_metadata_of_exactly_the_budget_is_imported(tmp_path: Path) -> None:
    context = await imported(note(tmp_path, at_budget(0)))

    _, description, aliases = await read(context, "notes", "Tea")

    assert len(description.encode()) + len(json.dumps(aliases).encode()) == (
        METADATA_BUDGET_BYTES
    )


async def test_metadata_one_byte_over_the_budget_is_refused(tmp_path: Path) -> None:
    error = await refused(note(tmp_path, at_budget(1)))

    assert (
        f"Tea.md: its description and aliases take {METADATA_BUDGET_BYTES + 1} "
        f"bytes, over the {METADATA_BUDGET_BYTES}-byte metadata limit"
    ) in str(error)


async def test_a_path_that_is_neither_folder_nor_file_is_refused(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "nowhere"

    error = await refused(missing)

    assert f"{str(missing)!r} is neither a folder nor a file" in str(error)


async def test_a_single_note_file_is_imported(tmp_path: Path) -> None:
    context = await imported(note(tmp_path, "title: Tea") / "Tea.md")

    content, _, _ = await read(context, "notes", "Tea")

    assert content == "- [stated] idea: Tea.\n"


async def test_tags_lose_one_leading_hash_only(tmp_path: Path) -> None:
    context = await imported(note(tmp_path, tags("#green", "oo#long", "##x")))

    _, _, aliases = await read(context, "notes", "Tea")

    assert aliases == ["green", "oo#long", "#x"]


async def test_a_date_and_time_reads_as_iso_8601(tmp_path: Path) -> None:
    context = await imported(note(tmp_path, "description: 2024-05-06T07:08:09Z"))

    _, description, _ = await read(context, "notes", "Tea")

    assert description == "2024-05-06T07:08:09+00:00"


async def test_a_one_letter_tag_makes_a_list_item_an_observation(
    tmp_path: Path,
) -> None:
    context = await imported(note(tmp_path, "title: Tea", "- steep it #a\n- no #\n"))

    content, _, _ = await read(context, "notes", "Tea")

    assert content == "- [stated] steep it #a\n- no #\n"


async def test_front_matter_that_is_a_list_is_refused_by_line(tmp_path: Path) -> None:
    error = await refused(note(tmp_path, "- a\n- b"))

    assert "Tea.md line 2: front matter is not a mapping" in str(error)


async def test_yaml_that_does_not_parse_names_its_problem(tmp_path: Path) -> None:
    error = await refused(note(tmp_path, "title: [one, two"))

    assert "front matter is not YAML: expected ',' or ']'" in str(error)


async def test_an_imported_note_s_history_names_the_import_and_the_task(
    tmp_path: Path,
) -> None:
    context = await imported(note(tmp_path, "title: Tea"))

    key = file_key("user", "alice", "notes", "Tea")
    (record,) = await context.storage.list_versions(key, after=None, limit=10)

    assert (record.operation, record.actor) == ("memory.import_basic_memory", "task")


async def test_a_title_of_the_longest_name_is_imported(tmp_path: Path) -> None:
    title = "t" * MAX_NAME_CHARS
    context = await imported(note(tmp_path, f"title: {title}"))

    content, _, _ = await read(context, "notes", title)

    assert content == "- [stated] idea: Tea.\n"


async def test_a_title_one_character_longer_is_refused(tmp_path: Path) -> None:
    error = await refused(note(tmp_path, "title: " + "t" * (MAX_NAME_CHARS + 1)))

    assert f"and have at most {MAX_NAME_CHARS} characters" in str(error)


async def test_a_title_with_an_invisible_character_is_refused(tmp_path: Path) -> None:
    error = await refused(note(tmp_path, 'title: "Te\\u200ba"'))

    assert (
        "a name must contain no invisible, separator or noncharacter code point. This"
        in str(error)
    )


async def test_two_notes_becoming_one_file_are_refused_naming_path(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.md").write_text("---\ntitle: Tea\n---\nx\n")
    note(tmp_path, "title: Tea")

    error = await refused(tmp_path)

    assert "both become the file 'Tea'" in str(error)
