"""What a ``gcs://`` URL names: bucket, prefix, deadline, attempts (no client)."""

from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

DEFAULT_TIMEOUT_SECONDS = 10.0
DEFAULT_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class GcsLocation:
    """Where objects live: ``gcs://bucket[/prefix][?timeout=S&attempts=N]``."""

    bucket: str
    prefix: str = ""
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    attempts: int = DEFAULT_ATTEMPTS


def _positive(query: dict[str, list[str]], name: str, default: float) -> float:
    text = query.pop(name, [str(default)])[-1]
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 600:
        raise ValueError(f"gcs:// option {name}={text!r} must be a number in (0, 600]")
    return value


def parse_gcs_url(url: str) -> GcsLocation:
    """Read a ``gcs://`` URL; a ValueError says how to spell a correct one."""
    parts = urlsplit(url)
    if parts.scheme != "gcs" or not parts.netloc:
        raise ValueError("gcs:// needs a bucket name, e.g. gcs://my-bucket/wenchang")
    query = parse_qs(parts.query)
    timeout = _positive(query, "timeout", DEFAULT_TIMEOUT_SECONDS)
    attempts = int(_positive(query, "attempts", DEFAULT_ATTEMPTS))
    if query or attempts < 1:
        raise ValueError("gcs:// takes only ?timeout=SECONDS&attempts=N (N ≥ 1)")
    prefix = parts.path.strip("/")
    return GcsLocation(parts.netloc, f"{prefix}/" if prefix else "", timeout, attempts)
