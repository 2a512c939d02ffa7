"""Durations in settings: ``90``, ``90s``, ``15m``, ``1h``, ``30d`` as seconds."""

DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def parse_duration(text: str) -> float:
    """Seconds in ``90``, ``90s``, ``15m``, ``1h`` or ``30d``; ValueError otherwise."""
    text = text.strip().lower()
    unit = DURATION_UNITS.get(text[-1:], 0)
    number = text[:-1] if unit else text
    try:
        return float(number) * (unit or 1)
    except ValueError:
        raise ValueError("use seconds or a number with s, m, h or d, e.g. 1h") from None
