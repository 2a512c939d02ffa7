"""The OAuth settings: durations with units, the public URL, trusted hosts."""

import pytest

from app.server.settings import Settings


def test_oauth_defaults() -> None:
    settings = Settings(storage="memory://")
    assert settings.public_url is None
    assert settings.oauth_access_ttl == 3600
    assert settings.oauth_unused_client_ttl == 30 * 86_400
    assert settings.oauth_trusted_client_hosts == ()
    assert settings.oauth_store_path is None


def test_durations_take_units_and_hosts_a_comma_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WENCHANG_OAUTH_ACCESS_TTL", "15m")
    monkeypatch.setenv("WENCHANG_OAUTH_UNUSED_CLIENT_TTL", "7d")
    monkeypatch.setenv("WENCHANG_OAUTH_TRUSTED_CLIENT_HOSTS", "cimd.internal, 10.0.0.5")
    monkeypatch.setenv("WENCHANG_PUBLIC_URL", "https://memory.example.com/")
    settings = Settings(storage="sqlite:///./x.db")
    assert settings.oauth_access_ttl == 900
    assert settings.oauth_unused_client_ttl == 7 * 86_400
    assert settings.oauth_trusted_client_hosts == ("cimd.internal", "10.0.0.5")
    assert settings.public_url == "https://memory.example.com"


@pytest.mark.parametrize("value", ["soon", "2w", "10s"])
def test_a_bad_access_ttl_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("WENCHANG_OAUTH_ACCESS_TTL", value)
    with pytest.raises(ValueError):
        Settings(storage="memory://")
