"""How a bad setting is reported: its variable, its wenchang.toml key, the fix."""

from pydantic import ValidationError
from pydantic_core import ErrorDetails


class SettingsError(Exception):
    """Settings that cannot start the service; the message says what to fix."""


def _describe_problem(problem: ErrorDetails) -> str:
    field = ".".join(str(part) for part in problem["loc"]) or "settings"
    if problem["type"] == "extra_forbidden":
        return (
            f"`{field}` in wenchang.toml is not a Wenchang setting; remove it or "
            "correct its spelling"
        )
    variable = f"WENCHANG_{str(problem['loc'][0]).upper()}" if problem["loc"] else field
    return f"{variable} (or `{field}` in wenchang.toml): {problem['msg']}"


def describe_problems(error: ValidationError) -> str:
    """Every bad setting, one a line, by its variable and its wenchang.toml key."""
    lines = [_describe_problem(problem) for problem in error.errors()]
    return "Invalid Wenchang settings:\n  " + "\n  ".join(lines)
