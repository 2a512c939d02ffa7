"""Path parameters of the client's calls: values a URL path cannot carry
(``app.shared.locations.is_url_segment``) are refused before sending, with the
error the server would give."""

from app.client.errors import InvalidArgumentError
from app.client.translate import error_from_payload
from app.features.memory.policy import require_path
from app.shared.errors import invalid_version_error
from app.shared.locations import SEGMENT_RULE, is_url_segment


def _require_url_segment(argument: str, value: str) -> None:
    if is_url_segment(value):
        return
    if argument == "version":
        # The server's own refusal (restore sends its version in the body).
        refused = invalid_version_error(value)
        raise error_from_payload(refused.code, refused.message, refused.details)
    if argument == "area":
        require_path(value, "name")
    if argument == "name":
        require_path("area", value)
    # No grant names a scope that is not one segment.
    problem = "is not a granted scope" if argument == "scope" else SEGMENT_RULE
    raise InvalidArgumentError(
        f"Argument {argument} is invalid: {value!r} {problem}. Correct the "
        "argument and retry.",
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
