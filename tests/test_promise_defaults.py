"""Every default the settings tables quote (README.md, docs/configuration.md)
is the default ``Settings`` has: a row whose default is a number or a literal
in backticks is compared with the field, so a changed default cannot leave a
stale figure in the docs."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.server.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| (`WENCHANG_[^|]*) \|[^|]*\| ([^|]*) \|$")
NUMBER = re.compile(r"^\d+$")
LITERAL = re.compile(r"^`([^`]*)`$")


def setting_names(cell: str) -> list[str]:
    """`WENCHANG_A`, `_B` names B after A (appended, or replacing A's last word)."""
    names: list[str] = []
    for part in re.findall(r"`([^`]+)`", cell):
        if part.startswith("_") and names:
            first = names[0]
            guesses = (first + part, first.rsplit("_", 1)[0] + part)
            part = next((g for g in guesses if field_of(g)), guesses[0])
        names.append(part)
    return names


def field_of(name: str) -> str | None:
    field = name.removeprefix("WENCHANG_").lower()
    return field if field in Settings.model_fields else None


def quoted_defaults(page: str) -> list[tuple[str, str]]:
    """(setting, default) for every literal default a table row quotes."""
    found: list[tuple[str, str]] = []
    for line in page.splitlines():
        row = ROW.match(line)
        if row is None:
            continue
        names, values = setting_names(row[1]), row[2].split(", ")
        if len(names) != len(values):
            continue
        for name, value in zip(names, values, strict=True):
            if NUMBER.match(value) or LITERAL.match(value):
                found.append((name, value))
    return found


def _durations(seconds: int) -> set[str]:
    """How a duration setting may be written: ``3600`` as ``1h``, ``60m`` …"""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
    return {f"{seconds // n}{unit}" for unit, n in units.items() if seconds % n == 0}


def rendered(default: Any) -> set[str]:
    """The ways a doc may write ``default``."""
    if isinstance(default, bool):
        return {str(default).lower()}
    if isinstance(default, int | float) and float(default).is_integer():
        return {str(int(default)), *_durations(int(default))}
    if isinstance(default, tuple):
        items = [str(item) for item in default]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        return {",".join(items), ", ".join(items)}
    if isinstance(default, dict | list):
        return {json.dumps(default)}
    return {str(default)}


# The README quotes the settings a first run needs; docs/configuration.md all.
PAGES = {"README.md": 1, "docs/configuration.md": 10}


@pytest.mark.parametrize("page", PAGES)
def test_quoted_defaults_are_the_settings_defaults(page: str) -> None:
    quoted = quoted_defaults((ROOT / page).read_text())
    assert len(quoted) >= PAGES[page], quoted
    wrong: list[tuple[str, str, Any]] = []
    for name, value in quoted:
        field = field_of(name)
        assert field is not None, f"{page}: {name} is no setting"
        literal = LITERAL.match(value)
        text = literal[1] if literal else value
        default = Settings.model_fields[field].get_default(call_default_factory=True)
        if text not in rendered(default):
            wrong.append((name, value, default))
    assert wrong == []
