"""Each refusal of the content policy names the argument at fault and says why."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import address_of
from app.features.memory.policy.content import (
    METADATA_BUDGET_BYTES,
    require_aliases,
    require_description,
    require_edit_fits,
    require_fact_line,
    require_metadata_budget,
    require_metadata_changes,
    require_old_string,
)
from app.features.memory.ports import FileMetadata
from app.shared.locations import Location


def raised(run: object, *arguments: object) -> tuple[str, str]:
    """(argument, sentence before the guidance) of the INVALID_ARGUMENT raised."""
    with pytest.raises(AppError) as caught:
        run(*arguments)  # type: ignore[operator]
    assert caught.value.details["error"] == "InvalidArgumentError"
    sentence = str(caught.value).split(" This is normal")[0]
    return caught.value.details["argument"], sentence


@pytest.mark.parametrize(
    ("run", "value", "argument"),
    [
        (require_description, "\ud800", "description"),
        (require_aliases, ["ok", "\ud800"], "aliases"),
        (require_fact_line, "- [stated] \ud800", "line"),
        (require_old_string, "\ud800", "old_string"),
    ],
)
def test_text_that_is_not_utf8_names_its_argument(
    run: object, value: object, argument: str
) -> None:
    assert raised(run, value) == (
        argument,
        f"Argument {argument} is invalid: {argument} is not valid UTF-8 text.",
    )


def test_each_rule_says_what_it_wants() -> None:
    assert raised(require_description, "two\nlines") == (
        "description",
        "Argument description is invalid: description must be a single line.",
    )
    assert raised(require_fact_line, "no label") == (
        "line",
        "Argument line is invalid: line must be a single fact line with a "
        "[stated], [observed], [inferred], or [system] label and non-empty text, "
        "e.g. '- [stated] Prefers tea'.",
    )
    assert raised(require_old_string, "") == (
        "old_string",
        "Argument old_string is invalid: old_string must not be empty.",
    )


@dataclass(frozen=True, slots=True)
class Changes:
    description: str | None
    aliases: Sequence[str] | None


def test_metadata_changes_check_aliases_then_the_description() -> None:
    both = Changes(description="a\nb", aliases=["\ud800"])
    assert raised(require_metadata_changes, both)[0] == "aliases"
    only = Changes(description="a\nb", aliases=None)
    assert raised(require_metadata_changes, only)[0] == "description"


def test_the_metadata_budget_is_inclusive_and_blames_the_larger_part() -> None:
    empty_aliases = len("[]")
    exact = "d" * (METADATA_BUDGET_BYTES - empty_aliases)
    require_metadata_budget(exact, [])  # exactly the budget fits
    assert raised(require_metadata_budget, exact + "d", []) == (
        "aliases",
        "Argument aliases is invalid: description and aliases together take "
        f"{METADATA_BUDGET_BYTES + 1} bytes of metadata, over the "
        f"{METADATA_BUDGET_BYTES}-byte limit; shorten the description or drop "
        "aliases.",
    )
    whole = "d" * METADATA_BUDGET_BYTES
    assert raised(require_metadata_budget, whole, [])[0] == "aliases"
    assert raised(require_metadata_budget, whole + "d", [])[0] == "description"


def test_an_edit_measures_its_metadata_when_it_changes_some() -> None:
    """A given description or alias holds the edit's whole metadata to the
    budget, exactly at its edge; metadata left as stored was held to it when
    it was written, and is not measured again."""
    address = address_of(Location("user", "notes", "tea"), "alice")
    at = datetime(2026, 12, 7, tzinfo=UTC)
    exact = "d" * (METADATA_BUDGET_BYTES - len('["a"]'))
    fits = FileMetadata(exact, ("a",), (), at)
    over = FileMetadata(exact + "d", ("a",), (), at)
    for changes in (Changes("x", None), Changes(None, ["a"]), Changes("", [])):
        assert require_edit_fits(address, "- x\n", fits, 4, changes) == b"- x\n"
        assert raised(require_edit_fits, address, "- x\n", over, 4, changes) == (
            "aliases",
            "Argument aliases is invalid: description and aliases together take "
            f"{METADATA_BUDGET_BYTES + 1} bytes of metadata, over the "
            f"{METADATA_BUDGET_BYTES}-byte limit; shorten the description or drop "
            "aliases.",
        )
    unchanged = Changes(None, None)
    assert require_edit_fits(address, "- x\n", over, 4, unchanged) == b"- x\n"
    with pytest.raises(AppError) as caught:
        require_edit_fits(address, "- xy\n", fits, 4, unchanged)
    assert caught.value.code == "OVERSIZE_WRITE"
