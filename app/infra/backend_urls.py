"""Every backend URL Wenchang accepts, per port: the one table that settings
validate against and that wiring dispatches on."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from app.infra.gcs.location import parse_gcs_url


class Backend(StrEnum):
    MEMORY = "memory"
    SQLITE = "sqlite"
    FILE = "file"
    GCS = "gcs"
    REDIS = "redis"
    STDOUT = "stdout"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class UrlForm:
    """One way to name a backend: a literal (no ``prefixes``) or a URL scheme."""

    backend: Backend
    example: str
    prefixes: tuple[str, ...] = ()
    check: Callable[[str], object] | None = None
    """Reads the whole URL; a ValueError says how to spell a correct one."""
    listed: bool = True
    """Named in the error message (test-only forms are not)."""

    def accepts(self, url: str) -> bool:
        if not self.prefixes:
            return url == self.example
        return any(url.startswith(p) and len(url) > len(p) for p in self.prefixes)


SQLITE = UrlForm(Backend.SQLITE, "sqlite:///path/to.db", ("sqlite:///",))
FILE = UrlForm(Backend.FILE, "file:///path/to/dir", ("file://",))
GCS = UrlForm(Backend.GCS, "gcs://bucket[/prefix]", ("gcs://",), parse_gcs_url)
REDIS = UrlForm(Backend.REDIS, "redis://host:6379/0", ("redis://", "rediss://"))

STORAGE_URLS = (SQLITE, FILE, GCS, UrlForm(Backend.MEMORY, "memory://"))
INDEX_CACHE_URLS = (
    UrlForm(Backend.NONE, "none"),
    UrlForm(Backend.MEMORY, "memory"),
    REDIS,
)
REQUEST_STORE_URLS = (UrlForm(Backend.MEMORY, "memory"), SQLITE, REDIS)
AUDIT_URLS = (
    SQLITE,
    FILE,
    UrlForm(Backend.STDOUT, "stdout"),
    UrlForm(Backend.NONE, "none"),
    UrlForm(Backend.MEMORY, "memory", listed=False),
)
URLS_BY_SETTING: dict[str, tuple[UrlForm, ...]] = {
    "storage": STORAGE_URLS,
    "index_cache": INDEX_CACHE_URLS,
    "request_store": REQUEST_STORE_URLS,
    "rate_limit_store": REQUEST_STORE_URLS,
    "audit": AUDIT_URLS,
}
"""The forms each backend setting accepts (settings validate against these)."""


def _choices(forms: Sequence[UrlForm]) -> str:
    examples = [form.example for form in forms if form.listed]
    return f"{', '.join(examples[:-1])} or {examples[-1]}"


def backend_of(url: str, forms: Sequence[UrlForm]) -> Backend:
    """The backend ``url`` names among ``forms``; a ValueError lists the forms."""
    for form in forms:
        if form.accepts(url):
            if form.check is not None:
                form.check(url)
            return form.backend
    raise ValueError(f"use {_choices(forms)}")


def sqlite_path(url: str) -> Path:
    """The database file of a ``sqlite:///path`` URL."""
    return Path(url.removeprefix("sqlite:///"))
