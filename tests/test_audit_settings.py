"""Audit settings and the token id events carry."""

import os
import sys
from pathlib import Path

import pytest

from app.infra.tokens.token_file import create_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.runtime import audit_stream
from app.server.settings import Settings, SettingsError, load_settings
from app.shared.identity import Grant, Identity


@pytest.fixture(autouse=True)
def workdir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty working directory and no WENCHANG_* variables from the caller."""
    for name in [name for name in os.environ if name.startswith("WENCHANG_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_audit_defaults_to_the_sqlite_database() -> None:
    """With SQLite storage, events go to the same database file."""
    settings = Settings(storage="sqlite:///data/w.db")

    assert settings.audit_url == "sqlite:///data/w.db"
    assert settings.audit_roles == ("owner", "admin")
    assert settings.audit_max_days == 365


@pytest.mark.parametrize("storage", ["memory://", "file:///tmp/w", "gcs://bucket"])
def test_audit_defaults_to_stdout_on_other_storage(storage: str) -> None:
    """Without SQLite storage, events are JSON lines on stdout."""
    assert Settings(storage=storage).audit_url == "stdout"


def test_audit_settings_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """WENCHANG_AUDIT, WENCHANG_AUDIT_ROLES and WENCHANG_AUDIT_MAX_DAYS are read."""
    monkeypatch.setenv("WENCHANG_AUDIT", "file:///var/log/wenchang")
    monkeypatch.setenv("WENCHANG_AUDIT_ROLES", "owner, auditor")
    monkeypatch.setenv("WENCHANG_AUDIT_MAX_DAYS", "30")

    settings = load_settings()

    assert settings.audit_url == "file:///var/log/wenchang"
    assert settings.audit_roles == ("owner", "auditor")
    assert settings.audit_max_days == 30


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("WENCHANG_AUDIT", "syslog"),
        ("WENCHANG_AUDIT_MAX_DAYS", "0"),
        ("WENCHANG_AUDIT_ROLES", " , "),
    ],
)
def test_bad_audit_settings_stop_startup_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    """A bad audit setting is a SettingsError that names its variable."""
    monkeypatch.setenv(variable, value)

    with pytest.raises(SettingsError, match=variable):
        load_settings()


def test_a_resolved_token_carries_its_public_id(tmp_path: Path) -> None:
    """The identity of a token names the id `wenchang token list` shows."""
    path = tmp_path / "tokens.json"
    secret, record = create_token(path, {"user": Grant("alice", "owner")})

    identity = TokenFileResolver(path).resolve(secret)

    assert isinstance(identity, Identity)
    assert identity.token_id == record.token_id
    assert record.token_id not in secret


def test_stdio_mcp_sends_audit_lines_to_stderr() -> None:
    """stdout carries the MCP protocol in `wenchang mcp`: events go to stderr."""
    assert audit_stream("mcp") is sys.stderr
    assert audit_stream("http") is sys.stdout
