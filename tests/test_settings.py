"""Settings: documented defaults, environment and TOML sources, startup validation."""

import io
import os
import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from functools import partial
from pathlib import Path

import pytest

from app.features.webhooks.policy import WebhookPolicy
from app.infra.port_wiring import (
    IDEMPOTENCY_STORES,
    RATE_LIMIT_STORES,
    open_audit_log,
    open_index_cache,
    open_request_store,
    open_storage,
)
from app.server.runtime import history_retention
from app.server.settings import SettingsError, load_settings
from app.shared.identity import Grant

LIMITS = ("max_file_bytes", "index_max_bytes", "list_page_size", "index_cache_ttl")


@pytest.fixture(autouse=True)
def workdir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty working directory and no WENCHANG_* variables from the caller."""
    for name in [name for name in os.environ if name.startswith("WENCHANG_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused(match: str) -> pytest.RaisesExc[SettingsError]:
    return pytest.raises(SettingsError, match=re.escape(match))


def test_defaults_match_the_spec() -> None:
    """With nothing configured, every setting has its documented default."""
    settings = load_settings()

    assert settings.storage == "sqlite:///./wenchang.db"
    assert settings.tokens_path == Path("wenchang-tokens.json")
    assert settings.max_file_bytes == 16384
    assert settings.index_max_bytes == 65536
    assert settings.list_page_size == 100
    assert settings.max_files_per_entity == 500
    assert settings.scope_priority == ()
    assert settings.write_policy == {}
    assert settings.product is None
    assert settings.tool_prefix is None
    assert settings.prompt_systems_of_record is None
    assert settings.require_approval == ()
    assert settings.index_cache == "memory"
    assert settings.index_cache_ttl == 30
    assert settings.allowed_hosts == ("127.0.0.1:*", "localhost:*", "[::1]:*")
    assert settings.allowed_origins == (
        "http://127.0.0.1:*",
        "http://localhost:*",
        "http://[::1]:*",
    )
    assert settings.local_grants == {"user": Grant(entity_id="local", role="owner")}


def test_tokens_file_defaults_to_the_database_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A database elsewhere keeps its tokens beside it."""
    monkeypatch.setenv("WENCHANG_STORAGE", "sqlite:///data/memory.db")

    assert load_settings().tokens_path == Path("data/wenchang-tokens.json")


def test_tokens_file_setting_overrides_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WENCHANG_TOKENS_FILE is used as given."""
    monkeypatch.setenv("WENCHANG_TOKENS_FILE", "secrets/tokens.json")

    assert load_settings().tokens_path == Path("secrets/tokens.json")


@pytest.mark.parametrize(
    "field",
    ["scope_priority", "require_approval", "allowed_hosts", "allowed_origins"],
)
def test_comma_lists_are_split_and_trimmed(
    monkeypatch: pytest.MonkeyPatch, field: str
) -> None:
    """Commas separate items; blanks around and between them are dropped."""
    monkeypatch.setenv(f"WENCHANG_{field.upper()}", " first, second ,,")

    assert getattr(load_settings(), field) == ("first", "second")


def test_local_identity_is_a_comma_list_of_grants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each item is SCOPE=ENTITY:ROLE."""
    monkeypatch.setenv("WENCHANG_LOCAL_IDENTITY", "user=me:owner, project=p1:member")

    assert load_settings().local_grants == {
        "user": Grant(entity_id="me", role="owner"),
        "project": Grant(entity_id="p1", role="member"),
    }


def test_malformed_local_identity_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A grant without ENTITY:ROLE is refused with the right spelling."""
    monkeypatch.setenv("WENCHANG_LOCAL_IDENTITY", "bad")

    with pytest.raises(SettingsError) as refusal:
        load_settings()

    assert "WENCHANG_LOCAL_IDENTITY" in str(refusal.value)
    assert "e.g. user=alice:owner" in str(refusal.value)


def test_scope_priority_lists_each_scope_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated scope is a mistake, not a tie-break."""
    monkeypatch.setenv("WENCHANG_SCOPE_PRIORITY", "user,project,user")

    with refused("WENCHANG_SCOPE_PRIORITY"):
        load_settings()


def test_write_roles_is_a_json_object_of_scope_to_roles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The policy maps each listed scope to the roles allowed to write it."""
    monkeypatch.setenv("WENCHANG_WRITE_ROLES", '{"project": ["owner", "editor"]}')

    assert load_settings().write_policy == {"project": frozenset({"owner", "editor"})}


@pytest.mark.parametrize("value", ['{"project": [owner]}', "[1]", '{"p": "owner"}'])
def test_malformed_write_roles_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Bad JSON and the wrong JSON shape both point at WENCHANG_WRITE_ROLES."""
    monkeypatch.setenv("WENCHANG_WRITE_ROLES", value)

    with refused("WENCHANG_WRITE_ROLES"):
        load_settings()


@pytest.mark.parametrize(("value", "chosen"), [("off", "off"), ("ON", "on")])
def test_fast_paths_are_on_or_off(
    monkeypatch: pytest.MonkeyPatch, value: str, chosen: str
) -> None:
    assert load_settings().fast_paths == "on"
    monkeypatch.setenv("WENCHANG_FAST_PATHS", value)

    assert load_settings().fast_paths == chosen


def test_fast_paths_refuse_another_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WENCHANG_FAST_PATHS", "fast")

    with refused("WENCHANG_FAST_PATHS"):
        load_settings()


@pytest.mark.parametrize("field", LIMITS)
@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_limits_must_be_positive_numbers(
    monkeypatch: pytest.MonkeyPatch, field: str, value: str
) -> None:
    """Zero, negative and non-numeric limits stop startup, naming the variable."""
    monkeypatch.setenv(f"WENCHANG_{field.upper()}", value)

    with refused(f"WENCHANG_{field.upper()} (or `{field}` in wenchang.toml)"):
        load_settings()


@pytest.mark.parametrize(
    ("field", "value"), [("max_file_bytes", "1048577"), ("list_page_size", "10001")]
)
def test_limits_have_a_ceiling(
    monkeypatch: pytest.MonkeyPatch, field: str, value: str
) -> None:
    """A limit beyond what the schemas can carry is refused."""
    monkeypatch.setenv(f"WENCHANG_{field.upper()}", value)

    with refused(f"WENCHANG_{field.upper()}"):
        load_settings()


def test_max_files_per_entity_zero_means_no_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Zero is the one limit value that is allowed: it disables the cap."""
    monkeypatch.setenv("WENCHANG_MAX_FILES_PER_ENTITY", "0")

    assert load_settings().max_files_per_entity == 0


def test_max_files_per_entity_may_not_be_negative(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Below zero is refused."""
    monkeypatch.setenv("WENCHANG_MAX_FILES_PER_ENTITY", "-1")

    with refused("WENCHANG_MAX_FILES_PER_ENTITY"):
        load_settings()


@pytest.mark.parametrize("url", ["memory://", "sqlite:///var/lib/wenchang.db"])
def test_storage_accepts_supported_urls(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """Each supported storage URL is kept as given."""
    monkeypatch.setenv("WENCHANG_STORAGE", url)

    assert load_settings().storage == url


def test_storage_refuses_an_unknown_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unsupported URL names the variable."""
    monkeypatch.setenv("WENCHANG_STORAGE", "ftp://x")

    with refused("WENCHANG_STORAGE"):
        load_settings()


def test_explicit_overrides_beat_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`wenchang serve --storage` wins over WENCHANG_STORAGE."""
    monkeypatch.setenv("WENCHANG_STORAGE", "sqlite:///env.db")

    assert load_settings(storage="memory://").storage == "memory://"


def test_toml_arrays_and_tables_configure_lists_and_policy() -> None:
    """TOML spells lists as arrays and the write policy as a table."""
    Path("wenchang.toml").write_text(
        'scope_priority = ["user", "project"]\n'
        'require_approval = ["delete_file"]\n'
        'local_identity = ["user=me:owner"]\n'
        "max_files_per_entity = 0\n"
        "[write_roles]\n"
        'project = ["owner"]\n'
    )

    settings = load_settings()

    assert settings.scope_priority == ("user", "project")
    assert settings.require_approval == ("delete_file",)
    assert settings.local_grants == {"user": Grant(entity_id="me", role="owner")}
    assert settings.max_files_per_entity == 0
    assert settings.write_policy == {"project": frozenset({"owner"})}


def test_environment_beats_toml(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same setting in both places takes the environment's value."""
    Path("wenchang.toml").write_text("max_file_bytes = 100\nlist_page_size = 7\n")
    monkeypatch.setenv("WENCHANG_MAX_FILE_BYTES", "200")

    settings = load_settings()

    assert settings.max_file_bytes == 200
    assert settings.list_page_size == 7


def test_toml_limits_are_validated_like_the_environment() -> None:
    """A bad value in the file is refused just as in a variable."""
    Path("wenchang.toml").write_text("index_max_bytes = 0\n")

    with refused("`index_max_bytes` in wenchang.toml"):
        load_settings()


def test_unknown_toml_key_is_refused() -> None:
    """A misspelt key is named, not silently ignored."""
    Path("wenchang.toml").write_text("max_file_byte = 100\n")

    with refused("`max_file_byte` in wenchang.toml is not a Wenchang setting"):
        load_settings()


def test_unparseable_toml_names_the_file() -> None:
    """A syntax error says which file to fix."""
    Path("wenchang.toml").write_text("max_file_bytes = \n")

    with refused("wenchang.toml is not valid TOML"):
        load_settings()


def test_wenchang_config_selects_the_toml_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WENCHANG_CONFIG is read instead of ./wenchang.toml."""
    Path("wenchang.toml").write_text("list_page_size = 1\n")
    Path("other.toml").write_text("list_page_size = 2\n")
    monkeypatch.setenv("WENCHANG_CONFIG", "other.toml")

    assert load_settings().list_page_size == 2


OPENERS: dict[str, Callable[[str], AbstractAsyncContextManager[object]]] = {
    "storage": open_storage,
    "index_cache": partial(open_index_cache, ttl=1),
    "request_store": partial(open_request_store, adapters=IDEMPOTENCY_STORES),
    "rate_limit_store": partial(open_request_store, adapters=RATE_LIMIT_STORES),
    "audit": partial(open_audit_log, max_days=1, stream=io.StringIO),
}


@pytest.mark.parametrize("field", OPENERS)
async def test_settings_and_wiring_read_one_table_of_backend_urls(field: str) -> None:
    """A URL settings refuse, wiring refuses with the same list of forms."""
    with pytest.raises(SettingsError) as by_settings:
        load_settings(**{field: "ftp://elsewhere"})

    with pytest.raises(ValueError) as by_wiring:
        async with OPENERS[field]("ftp://elsewhere"):
            pass

    assert str(by_wiring.value).startswith("use ")
    assert str(by_wiring.value) in str(by_settings.value)


def test_area_ttl_is_a_json_object_of_durations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each area's lifetime, in seconds, from a whole number and its unit."""
    monkeypatch.setenv("WENCHANG_AREA_TTL", '{"scratch": "7d", "inbox": "90m"}')

    assert load_settings().area_ttl == {"scratch": 604_800, "inbox": 5400}


@pytest.mark.parametrize(
    "value", ['{"scratch": "7"}', '{"scratch": "1.5h"}', '{"s": "0d"}', "7d", "[]"]
)
def test_a_malformed_area_ttl_refuses_to_start(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """A duration without a unit, a fraction, zero or another shape is refused."""
    monkeypatch.setenv("WENCHANG_AREA_TTL", value)

    with refused("WENCHANG_AREA_TTL"):
        load_settings()


def test_change_feed_and_webhook_settings_default_as_documented() -> None:
    """docs/changes.md: a 7d retention; retries from 5s for 24h; no trusted host."""
    settings = load_settings()

    assert history_retention(settings).changes_seconds == 7 * 86_400
    assert settings.webhook_policy == WebhookPolicy(
        trusted_hosts=frozenset(), retry_base=5.0, retry_window=86_400.0
    )


def test_change_feed_and_webhook_durations_and_hosts_are_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WENCHANG_CHANGES_RETENTION", "12h")
    monkeypatch.setenv("WENCHANG_WEBHOOK_RETRY_BASE", "90s")
    monkeypatch.setenv("WENCHANG_WEBHOOK_RETRY_WINDOW", "2d")
    monkeypatch.setenv("WENCHANG_WEBHOOK_TRUSTED_HOSTS", " Hooks.Internal , 10.0.0.7,")
    settings = load_settings()

    assert history_retention(settings).changes_seconds == 12 * 3_600
    assert settings.webhook_policy == WebhookPolicy(
        trusted_hosts=frozenset({"hooks.internal", "10.0.0.7"}),
        retry_base=90.0,
        retry_window=2 * 86_400.0,
    )
