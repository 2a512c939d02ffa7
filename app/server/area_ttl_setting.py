"""WENCHANG_AREA_TTL: each area's default lifetime, as a JSON object of durations."""

import json
import re

_DURATION = re.compile(r"^([0-9]+)([smhd])$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_SHAPE = 'use a JSON object of area to duration, e.g. {"scratch": "7d"}'


def duration_seconds(text: str) -> int:
    """Seconds in a whole number + s, m, h or d (``90s``, ``7d``); else ValueError."""
    match = _DURATION.match(text)
    if match is None or int(match[1]) == 0:
        raise ValueError(
            f"{text!r} is not a duration: a positive whole number with s, m, h or d"
        )
    return int(match[1]) * _SECONDS[match[2]]


def area_ttl(value: object) -> dict[str, int]:
    """The setting's areas and their lifetimes in seconds; ValueError with the fix."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise ValueError(_SHAPE) from None
    if not isinstance(value, dict):
        raise ValueError(_SHAPE)
    seconds: dict[str, int] = {}
    for area, duration in value.items():  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(area, str) or not isinstance(duration, str):
            raise ValueError(_SHAPE)
        seconds[area] = duration_seconds(duration)
    return seconds
