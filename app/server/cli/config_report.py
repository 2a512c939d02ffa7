"""Loud configuration: unknown ``WENCHANG_*`` variables, and the effective settings.

A misspelt variable (``WENCHANG_STORAGES``) would otherwise be ignored in
silence and the service would run on a default the operator did not choose;
``serve`` and ``mcp`` name it once at startup with the closest valid name.
``wenchang config`` prints every effective setting, secrets masked.
"""

import difflib
import json
from collections.abc import Iterator, Mapping
from typing import cast
from urllib.parse import urlsplit, urlunsplit

from app.server.settings import Settings

PREFIX = "WENCHANG_"
TOOLING_VARIABLES = frozenset(
    {
        "WENCHANG_CONFIG",
        "WENCHANG_TEST_STORAGE",
        "WENCHANG_MODEL_EXAMPLES",
        "WENCHANG_FUZZ_EXAMPLES",
        "WENCHANG_CRASH_CYCLES",
        "WENCHANG_LOAD_SECONDS",
    }
)
"""Variables read outside ``Settings``: the config file, logs, the test suite."""
SECRETS = frozenset({"cursor_secret"})
MASK = "****"


def setting_variables() -> list[str]:
    return [PREFIX + name.upper() for name in Settings.model_fields]


def known_variables() -> frozenset[str]:
    return frozenset(setting_variables()) | TOOLING_VARIABLES


def unknown_variables(environ: Mapping[str, str]) -> Iterator[tuple[str, str | None]]:
    """Each ``WENCHANG_*`` name nothing reads, with the closest valid name."""
    known = known_variables()
    for name in sorted(environ):
        if name.startswith(PREFIX) and name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            yield name, close[0] if close else None


def unknown_variable_warnings(environ: Mapping[str, str]) -> list[str]:
    return [
        f"{name} is not a Wenchang setting and is ignored; "
        + (f"did you mean {close}?" if close else "see `wenchang config`.")
        for name, close in unknown_variables(environ)
    ]


def masked_url(url: str) -> str:
    """``url`` with any password replaced, so it can be printed."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    netloc = f"{user}:{MASK}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def shown(name: str, value: object) -> object:
    if name in SECRETS and value is not None:
        return MASK
    if isinstance(value, str) and "://" in value:
        return masked_url(value)
    if isinstance(value, tuple):
        return [str(item) for item in cast(tuple[object, ...], value)]
    return value


def toml_value(value: object) -> str:
    if isinstance(value, dict):
        table = cast(dict[str, object], value)
        items = [f"{key} = {toml_value(item)}" for key, item in table.items()]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    return json.dumps(value, ensure_ascii=False)


def effective_settings(settings: Settings) -> str:
    """Every setting as ``wenchang.toml`` lines; unset optional ones commented."""
    lines: list[str] = []
    for name in Settings.model_fields:
        value = shown(name, getattr(settings, name))
        variable = PREFIX + name.upper()
        if value is None:
            lines.append(f"# {name}: not set ({variable})")
        else:
            lines.append(f"{name} = {toml_value(value)}  # {variable}")
    return "\n".join(lines)
