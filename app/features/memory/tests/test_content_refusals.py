"""Each refusal of the content policy names the argument at fault and says why."""

from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from tenchi.errors import AppError

from app.features.memory.policy.content import (
    METADATA_BUDGET_BYTES,
    require_aliases,
    require_description,
    require_fact_line,
    require_metadata_budget,
    require_metadata_changes,
    require_old_string,
)


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
