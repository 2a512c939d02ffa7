"""Path parameters of the client's calls: values a URL path cannot carry are
refused before sending, with the error the server would give."""

from app.client.errors import InvalidArgumentError
from app.features.memory.policy import require_path


def _require_url_segment(argument: str, value: str) -> None:
    if value not in ("", ".", "..") and "/" not in value:
        return
    if argument == "area":
        require_path(value, "name")
    if argument == "name":
        require_path("area", value)
    raise InvalidArgumentError(
        f"Argument {argument} is invalid: {value!r} is not a granted scope; use "
        "one of the scopes granted to your token. Correct the argument and retry.",
        {
            "error": "InvalidArgumentError",
            "category": "recoverable",
            "argument": argument,
        },
    )


def require_url_segments(**segments: str | None) -> dict[str, str]:
    """The given path parameters (None ones left out), each a single segment."""
    present = {key: value for key, value in segments.items() if value is not None}
    for argument, value in present.items():
        _require_url_segment(argument, value)
    return present


def file_path(scope: str, area: str, name: str) -> dict[str, str]:
    return require_url_segments(scope=scope, area=area, name=name)
