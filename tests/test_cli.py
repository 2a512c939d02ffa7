"""The `wenchang` command: tokens, settings errors, config files, first serve."""

import asyncio
import hashlib
import os
import re
import time
from collections.abc import AsyncGenerator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from tenchi.testing import open_http

from app.infra.tokens.token_file import (
    create_token,
    ensure_cursor_secret,
    read_token_file,
    revoke_token,
)
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.asgi import build_app
from app.server.cli.main import ensure_first_token, main
from app.server.settings import load_settings
from app.shared.identity import Identity, parse_grants
from tests.support.server import free_port, run_wenchang, running_server

TOKEN_PATTERN = re.compile(r"wct_[A-Za-z0-9_-]+")
TOKENS = Path("wenchang-tokens.json")
RELOAD_BOUND_SECONDS = 5.0
CREATE_ALICE = (
    "token",
    "create",
    "--grant",
    "user=alice:owner",
    "--grant",
    "project=p1:member",
    "--label",
    "L",
    "--expires",
    "1",
)


@pytest.fixture(autouse=True)
def workdir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty working directory and no WENCHANG_* variables from the caller."""
    for name in [name for name in os.environ if name.startswith("WENCHANG_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def wenchang(
    capsys: pytest.CaptureFixture[str], *arguments: str
) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def printed_secret(output: str) -> str:
    found = TOKEN_PATTERN.search(output)
    assert found, output
    return found.group()


def test_token_create_prints_the_secret_once_and_stores_only_its_hash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The secret is printed once with the token id; the file holds its SHA-256."""
    code, out, _ = wenchang(capsys, *CREATE_ALICE)

    secret = printed_secret(out)
    (record,) = read_token_file(TOKENS).tokens
    assert code == 0
    assert out.count(secret) == 1
    assert record.token_id in out
    assert record.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in TOKENS.read_text()
    assert record.label == "L"
    assert {scope: (g.entity_id, g.role) for scope, g in record.grants.items()} == {
        "user": ("alice", "owner"),
        "project": ("p1", "member"),
    }
    assert record.expires_at == record.created_at + timedelta(days=1)


def test_token_list_shows_id_label_grants_and_expiry_but_no_secret(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each line names a token without anything that could authenticate."""
    _, created, _ = wenchang(capsys, *CREATE_ALICE)
    wenchang(capsys, "token", "create", "--grant", "user=bob:owner")

    code, out, _ = wenchang(capsys, "token", "list")

    alice, bob = read_token_file(TOKENS).tokens
    assert alice.expires_at is not None
    assert code == 0
    assert (
        f"{alice.token_id}  L  user=alice:owner project=p1:member  "
        f"expires {alice.expires_at.isoformat()}"
    ) in out
    assert f"{bob.token_id}  -  user=bob:owner  expires never" in out
    assert printed_secret(created) not in out
    assert "wct_" not in out
    assert alice.digest not in out
    assert bob.digest not in out


def test_token_revoke_removes_the_token(capsys: pytest.CaptureFixture[str]) -> None:
    """A revoked token disappears from the file and from the listing."""
    wenchang(capsys, *CREATE_ALICE)
    (record,) = read_token_file(TOKENS).tokens

    code, out, _ = wenchang(capsys, "token", "revoke", record.token_id)

    assert code == 0
    assert f"{record.token_id} revoked" in out
    assert read_token_file(TOKENS).tokens == ()
    assert record.token_id not in wenchang(capsys, "token", "list")[1]


def test_revoking_an_unknown_token_exits_1_pointing_at_token_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A typo in the id changes nothing and says where to find the ids."""
    code, out, _ = wenchang(capsys, "token", "revoke", "tok_nope")

    assert code == 1
    assert "wenchang token list" in out


@pytest.mark.parametrize(
    ("grants", "fix"),
    [
        (["alice"], "must look like SCOPE=ENTITY:ROLE, e.g. user=alice:owner"),
        (["user=alice"], "must look like SCOPE=ENTITY:ROLE"),
        (["user=:owner"], "must look like SCOPE=ENTITY:ROLE"),
        (["user=alice:"], "must look like SCOPE=ENTITY:ROLE"),
        (["user=a/b:owner"], "without '/'"),
        (["..=alice:owner"], "'.' or '..'"),
        (["user=alice:owner", "user=bob:owner"], "grant it once"),
    ],
)
def test_bad_grant_exits_2_with_a_message_naming_the_fix(
    capsys: pytest.CaptureFixture[str], grants: list[str], fix: str
) -> None:
    """A malformed --grant creates nothing and shows the right spelling."""
    arguments = [part for grant in grants for part in ("--grant", grant)]

    code, _, err = wenchang(capsys, "token", "create", *arguments)

    assert code == 2
    assert fix in err
    assert not TOKENS.exists()


def test_a_label_utf8_cannot_carry_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Undecodable bytes in argv arrive as lone surrogates; as a token's label they
    would be every write's actor and source, which no store can write."""
    grant = ["--grant", "user=alice:owner"]
    code, _, err = wenchang(capsys, "token", "create", *grant, "--label", "bot\udcff")

    assert code == 2
    assert "not text UTF-8 can carry" in err
    assert not TOKENS.exists()


@pytest.mark.parametrize(("label", "code"), [("é" * 200, 0), ("é" * 200 + "x", 2)])
def test_a_label_has_at_most_200_characters(
    capsys: pytest.CaptureFixture[str], label: str, code: int
) -> None:
    """Every write records its token's label in `sources`, whose room in a GCS
    object's metadata is shared with description and aliases (an OAuth client's
    name has the same limit)."""
    grant = ["--grant", "user=alice:owner"]
    exit_code, _, err = wenchang(capsys, "token", "create", *grant, "--label", label)

    assert exit_code == code, err
    assert TOKENS.exists() == (code == 0)
    if code:
        assert "201 characters, over the 200-character limit" in err


@pytest.mark.parametrize("days", ["0", "-1", "soon", "inf"])
def test_expires_must_be_a_positive_number_of_days(
    capsys: pytest.CaptureFixture[str], days: str
) -> None:
    """Zero would never expire and a negative value would be born expired."""
    with pytest.raises(SystemExit) as exited:
        main(["token", "create", "--grant", "user=alice:owner", "--expires", days])

    assert exited.value.code == 2
    assert "use a positive number" in capsys.readouterr().err
    assert not TOKENS.exists()


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("WENCHANG_MAX_FILE_BYTES", "0"),
        ("WENCHANG_STORAGE", "ftp://x"),
        ("WENCHANG_WRITE_ROLES", '{"project": [owner]}'),
        ("WENCHANG_LOCAL_IDENTITY", "bad"),
    ],
)
def test_bad_setting_stops_serve_with_exit_2_naming_the_variable(
    workdir: Path, variable: str, value: str
) -> None:
    """`wenchang serve` refuses to start and says which variable to fix."""
    result = run_wenchang(
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(free_port()),
        cwd=workdir,
        settings={variable: value},
    )

    assert result.returncode == 2
    assert variable in result.stderr
    assert "Traceback" not in result.stderr
    assert list(workdir.iterdir()) == []


def test_serve_on_an_empty_directory_creates_database_and_token_file(
    workdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The defaults put wenchang.db and a private wenchang-tokens.json in cwd."""
    with running_server(workdir, logs=tmp_path_factory.mktemp("logs")):
        created = {path.name for path in workdir.iterdir()}

    assert {"wenchang.db", "wenchang-tokens.json"} <= created
    assert (workdir / "wenchang-tokens.json").stat().st_mode & 0o777 == 0o600


def test_wenchang_toml_in_the_working_directory_is_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A setting in ./wenchang.toml decides where tokens go."""
    Path("wenchang.toml").write_text('tokens_file = "from-toml.json"\n')

    code, _, _ = wenchang(capsys, *CREATE_ALICE)

    assert code == 0
    assert Path("from-toml.json").exists()
    assert not TOKENS.exists()


def test_wenchang_config_points_at_a_toml_file_elsewhere(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """WENCHANG_CONFIG replaces ./wenchang.toml rather than adding to it."""
    Path("wenchang.toml").write_text('tokens_file = "from-cwd.json"\n')
    Path("etc").mkdir()
    Path("etc/wenchang.toml").write_text('tokens_file = "from-etc.json"\n')
    monkeypatch.setenv("WENCHANG_CONFIG", "etc/wenchang.toml")

    wenchang(capsys, *CREATE_ALICE)

    assert Path("from-etc.json").exists()
    assert not Path("from-cwd.json").exists()


def test_environment_beats_wenchang_toml(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A WENCHANG_* variable overrides the same key in the TOML file."""
    Path("wenchang.toml").write_text('tokens_file = "from-toml.json"\n')
    monkeypatch.setenv("WENCHANG_TOKENS_FILE", "from-env.json")

    wenchang(capsys, *CREATE_ALICE)

    assert Path("from-env.json").exists()
    assert not Path("from-toml.json").exists()


def test_unknown_toml_key_exits_2_naming_the_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A misspelt key is rejected, not silently ignored."""
    Path("wenchang.toml").write_text('tokens_fiel = "x.json"\n')

    code, _, err = wenchang(capsys, "token", "list")

    assert code == 2
    assert "`tokens_fiel` in wenchang.toml is not a Wenchang setting" in err


def test_missing_wenchang_config_file_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """WENCHANG_CONFIG naming no file is an error, not a silent default."""
    monkeypatch.setenv("WENCHANG_CONFIG", "absent.toml")

    code, _, err = wenchang(capsys, "token", "list")

    assert code == 2
    assert "WENCHANG_CONFIG points at 'absent.toml'" in err


def token_file_app() -> Starlette:
    """The HTTP app on memory storage, resolving ./wenchang-tokens.json tokens."""
    settings = load_settings(storage="memory://")
    return build_app(settings, resolver=TokenFileResolver(settings.tokens_path))


@pytest.fixture
async def http() -> AsyncGenerator[httpx.AsyncClient]:
    async with open_http(token_file_app()) as client:
        yield client


async def index_status_becomes(
    http: httpx.AsyncClient, secret: str, wanted: int
) -> httpx.Response:
    """Poll GET /v1/index until it answers `wanted` or a bound passes."""
    deadline = time.monotonic() + RELOAD_BOUND_SECONDS
    while True:
        response = await http.get(
            "/v1/index", headers={"Authorization": f"Bearer {secret}"}
        )
        if response.status_code == wanted or time.monotonic() > deadline:
            return response
        await asyncio.sleep(0.05)


async def test_token_created_while_the_app_runs_is_accepted_without_restart(
    capsys: pytest.CaptureFixture[str], http: httpx.AsyncClient
) -> None:
    """The resolver re-reads the token file when the CLI changes it."""
    _, out, _ = wenchang(capsys, *CREATE_ALICE)

    response = await index_status_becomes(http, printed_secret(out), 200)

    assert response.status_code == 200


async def test_revoked_token_gets_401_from_a_running_app(
    capsys: pytest.CaptureFixture[str], http: httpx.AsyncClient
) -> None:
    """Revocation takes effect without a restart and answers with a challenge."""
    _, out, _ = wenchang(capsys, *CREATE_ALICE)
    secret = printed_secret(out)
    accepted = await index_status_becomes(http, secret, 200)
    (record,) = read_token_file(TOKENS).tokens

    wenchang(capsys, "token", "revoke", record.token_id)
    refused = await index_status_becomes(http, secret, 401)

    assert accepted.status_code == 200
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")


async def test_expired_token_gets_401_with_a_bearer_challenge() -> None:
    """A token past its expiry is refused, and the message says it expired."""
    secret, _ = create_token(
        TOKENS,
        parse_grants(["user=alice:owner"]),
        expires_in_days=1,
        now=datetime.now(UTC) - timedelta(days=2),
    )

    async with open_http(token_file_app()) as http:
        response = await http.get(
            "/v1/index", headers={"Authorization": f"Bearer {secret}"}
        )

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert "expired" in response.json()["details"]["message"]


def test_revocation_is_seen_even_if_the_file_keeps_its_size_and_mtime() -> None:
    """A replaced token file is re-read although its size and mtime look the same."""
    now = datetime.now(UTC)
    grants = parse_grants(["user=alice:owner"])
    secret, record = create_token(TOKENS, grants, now=now)
    before = TOKENS.stat()
    resolver = TokenFileResolver(TOKENS)
    revoke_token(TOKENS, record.token_id)
    create_token(TOKENS, grants, now=now)
    os.utime(TOKENS, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert TOKENS.stat().st_size == before.st_size

    deadline = time.monotonic() + RELOAD_BOUND_SECONDS
    while isinstance(resolver.resolve(secret), Identity):
        assert time.monotonic() < deadline, "the revoked token is still accepted"
        time.sleep(0.05)


def test_an_unknown_variable_is_named_with_the_closest_setting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo such as WENCHANG_STORAGES is named once, with WENCHANG_STORAGE."""
    monkeypatch.setenv("WENCHANG_STORAGES", "memory://")

    code, out, err = wenchang(capsys, "config")

    assert code == 0
    assert err.count("WENCHANG_STORAGES") == 1
    assert "did you mean WENCHANG_STORAGE?" in err
    assert 'storage = "sqlite:///./wenchang.db"' in out


def test_serve_warns_about_an_unknown_variable_at_startup(
    workdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`wenchang serve` names the typo once on stderr, then serves."""
    settings = {"WENCHANG_STORAGE": "memory://", "WENCHANG_RATE_LIMT": "5"}
    logs = tmp_path_factory.mktemp("logs")

    with running_server(workdir, logs=logs, settings=settings) as server:
        stderr = server.stderr()

    assert stderr.count("WENCHANG_RATE_LIMT") == 1
    assert "did you mean WENCHANG_RATE_LIMIT?" in stderr


def test_config_prints_every_setting_with_secrets_masked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The effective settings, as wenchang.toml lines; secrets never printed."""
    monkeypatch.setenv("WENCHANG_CURSOR_SECRET", "s3cret-s3cret-s3cret")
    monkeypatch.setenv("WENCHANG_INDEX_CACHE", "redis://:hunter2@cache:6379/0")
    monkeypatch.setenv("WENCHANG_RATE_LIMIT", "50")

    code, out, _ = wenchang(capsys, "config")

    assert code == 0
    assert "s3cret" not in out and "hunter2" not in out
    assert 'cursor_secret = "****"' in out
    assert 'index_cache = "redis://:****@cache:6379/0"' in out
    assert "rate_limit = 50  # WENCHANG_RATE_LIMIT" in out


def test_config_exits_2_naming_an_invalid_setting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An invalid value stops `wenchang config` with the variable and a fix."""
    monkeypatch.setenv("WENCHANG_STORAGE", "postgres://db")

    code, out, err = wenchang(capsys, "config")

    assert code == 2
    assert out == ""
    assert "WENCHANG_STORAGE" in err and "sqlite:///" in err


def _first_serve(capsys: pytest.CaptureFixture[str]) -> tuple[str | None, str]:
    notice = ensure_first_token(load_settings(), "http://127.0.0.1:8000")
    return notice, capsys.readouterr().err


def test_first_serve_mints_a_token_only_when_the_file_does_not_exist(
    capsys: pytest.CaptureFixture[str],
) -> None:
    notice, _ = _first_serve(capsys)
    assert notice is not None and TOKEN_PATTERN.search(notice)
    assert len(read_token_file(TOKENS).tokens) == 1
    assert _first_serve(capsys) == (None, "")


def test_a_file_made_only_for_the_cursor_secret_still_gets_the_first_token(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`wenchang mcp` before the first serve writes the file without a token."""
    ensure_cursor_secret(TOKENS)
    notice, _ = _first_serve(capsys)
    assert notice is not None and TOKEN_PATTERN.search(notice)


def test_revoking_every_token_means_no_access_not_a_new_owner_token(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _first_serve(capsys)
    (record,) = read_token_file(TOKENS).tokens
    assert revoke_token(TOKENS, record.token_id)
    notice, warning = _first_serve(capsys)
    assert notice is None
    assert read_token_file(TOKENS).tokens == ()
    assert "holds no tokens" in warning and "wenchang token create" in warning


def test_an_empty_token_file_means_no_access(
    capsys: pytest.CaptureFixture[str],
) -> None:
    TOKENS.write_text("")
    notice, warning = _first_serve(capsys)
    assert notice is None and "wenchang token create" in warning
    assert read_token_file(TOKENS).tokens == ()
    # The cursor secret is then kept in the file, the same for every process.
    secret = ensure_cursor_secret(TOKENS)
    assert ensure_cursor_secret(TOKENS) == secret
    assert _first_serve(capsys)[0] is None
