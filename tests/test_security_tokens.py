"""Bearer tokens: stored as hashes in a 0600 file, compared in constant time,
rejected once expired or revoked (also by a server that is already running)."""

import ast
import inspect
import json
import re
import stat
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from app.infra.tokens import token_file_resolver
from app.infra.tokens.token_file import create_token, ensure_cursor_secret, revoke_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.shared.identity import Grant, Identity
from tests.http_support import MCP_WRITE
from tests.support.server import run_wenchang, running_server

ALICE = {"user": Grant("alice", "owner")}
REVOCATION_BOUND_SECONDS = 10.0


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_token_file_is_written_0600_and_holds_no_secret(tmp_path: Path) -> None:
    """Create, revoke and the cursor secret all leave an owner-only file of hashes."""
    path = tmp_path / "tokens.json"
    ensure_cursor_secret(path)
    first_mode = mode_of(path)
    secret, record = create_token(path, ALICE)
    second, _ = create_token(path, ALICE, label="phone")
    created_mode = mode_of(path)
    revoke_token(path, record.token_id)

    text = path.read_text()
    assert (first_mode, created_mode, mode_of(path)) == (0o600, 0o600, 0o600)
    assert secret not in text
    assert second not in text
    assert "wct_" not in text


def test_the_cli_prints_a_new_secret_once_and_never_lists_it(tmp_path: Path) -> None:
    """`token create` shows the secret; `token list` and the file never do."""
    settings = {"WENCHANG_TOKENS_FILE": str(tmp_path / "tokens.json")}

    created = run_wenchang(
        "token",
        "create",
        "--grant",
        "user=alice:owner",
        cwd=tmp_path,
        settings=settings,
    )
    listed = run_wenchang("token", "list", cwd=tmp_path, settings=settings)

    found = re.search(r"wct_[A-Za-z0-9_-]+", created.stdout)
    assert created.returncode == 0 and found, created.stderr
    secret = found.group()
    assert secret not in listed.stdout + listed.stderr
    assert secret not in (tmp_path / "tokens.json").read_text()
    assert mode_of(tmp_path / "tokens.json") == 0o600


def test_an_expired_token_is_rejected(tmp_path: Path) -> None:
    """At its expiry instant the token stops resolving."""
    path = tmp_path / "tokens.json"
    start = datetime(2026, 1, 1, tzinfo=UTC)
    secret, _ = create_token(path, ALICE, expires_in_days=1, now=start)
    now = start

    resolver = TokenFileResolver(path, clock=lambda: now)
    before = resolver.resolve(secret)
    now = start + timedelta(days=1)
    after = resolver.resolve(secret)

    assert isinstance(before, Identity)
    assert not isinstance(after, Identity)
    assert "expired" in after.detail


def test_a_near_miss_token_is_rejected_like_any_other(tmp_path: Path) -> None:
    """A token one character off, a prefix or a longer string: all plainly invalid."""
    path = tmp_path / "tokens.json"
    secret, _ = create_token(path, ALICE)
    resolver = TokenFileResolver(path)
    near_misses = [secret[:-1] + ("A" if secret[-1] != "A" else "B"), secret[:-1]]
    near_misses += [secret + "x", secret.upper(), "", " " + secret]

    answers = [resolver.resolve(candidate) for candidate in near_misses]

    assert all(not isinstance(answer, Identity) for answer in answers)
    assert {
        answer.detail for answer in answers if not isinstance(answer, Identity)
    } == {"The bearer token is not valid."}


def test_the_token_check_compares_digests_in_constant_time() -> None:
    """The secret is hashed before any lookup, and the digest is checked with
    hmac.compare_digest: no comparison ever runs over the secret itself."""
    tree = ast.parse(
        inspect.getsource(token_file_resolver.TokenFileResolver.resolve).strip()
    )
    calls = [
        node.func
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
    ]
    names = [
        call.attr if isinstance(call, ast.Attribute) else call.id for call in calls
    ]
    compared = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(
            isinstance(side, ast.Name) and side.id == "credentials"
            for side in (node.left, *node.comparators)
        )
    ]

    assert names.index("_digest") < names.index("compare_digest")
    assert compared == []


def test_a_running_server_rejects_a_revoked_token(tmp_path: Path) -> None:
    """Revoking with the CLI takes effect without a restart (within a bound)."""
    tokens = tmp_path / "tokens.json"
    secret, record = create_token(tokens, ALICE)
    keep, _ = create_token(tokens, ALICE)
    settings = {
        "WENCHANG_STORAGE": "memory://",
        "WENCHANG_TOKENS_FILE": str(tokens),
    }
    with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as server:
        url = f"{server.url}/v1/index"
        before = httpx.get(url, headers={"Authorization": f"Bearer {secret}"})
        revoked = run_wenchang(
            "token", "revoke", record.token_id, cwd=tmp_path, settings=settings
        )
        deadline = time.monotonic() + REVOCATION_BOUND_SECONDS
        after = before
        while after.status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.2)
            after = httpx.get(url, headers={"Authorization": f"Bearer {secret}"})
        other = httpx.get(url, headers={"Authorization": f"Bearer {keep}"})

    assert before.status_code == 200
    assert revoked.returncode == 0, revoked.stderr
    assert after.status_code == 401
    assert after.headers["WWW-Authenticate"].startswith("Bearer")
    assert other.status_code == 200
    assert record.token_id not in json.dumps(after.json())


def test_a_grant_naming_more_than_one_key_segment_is_refused(tmp_path: Path) -> None:
    """An entity or scope holding '/' would reach another entity's keys (grant
    user=alice/notes lists alice's notes): a hand-edited file holding one is not
    loaded, and create_token refuses one, as `wenchang token create` does."""
    path = tmp_path / "tokens.json"
    create_token(path, ALICE)
    document = json.loads(path.read_text())
    document["tokens"][0]["grants"]["user"]["entity_id"] = "alice/notes"
    path.write_text(json.dumps(document))

    with pytest.raises(ValueError, match="not a Wenchang token file"):
        TokenFileResolver(path)
    listed = run_wenchang(
        "token", "list", cwd=tmp_path, settings={"WENCHANG_TOKENS_FILE": str(path)}
    )
    for grants in (
        {"user": Grant("alice/notes", "owner")},
        {"user/alice": Grant("notes", "owner")},
    ):
        with pytest.raises(ValueError, match="invalid"):
            create_token(tmp_path / "other.json", grants)

    assert listed.returncode != 0
    assert "entity" in listed.stderr


@pytest.mark.parametrize("label", ["bot\udcff", "\ud800", 42, ["bot"]])
def test_a_hand_edited_label_that_is_not_text_stops_the_server_at_start(
    tmp_path: Path, label: object
) -> None:
    """A label is every write's actor and source: a lone surrogate (a JSON
    escape UTF-8 cannot carry) or a non-string would make each write of that
    token a 500, so `wenchang serve` and `token list` refuse the file, exit 2,
    naming the label, as `token create` refuses such a label."""
    path = tmp_path / "tokens.json"
    create_token(path, ALICE, label="bot")
    document = json.loads(path.read_text())
    document["tokens"][0]["label"] = label
    path.write_text(json.dumps(document))
    settings = {
        "WENCHANG_TOKENS_FILE": str(path),
        "WENCHANG_STORAGE": f"sqlite:///{tmp_path / 'memory.db'}",
    }

    served = run_wenchang("serve", "--port", "0", cwd=tmp_path, settings=settings)
    listed = run_wenchang("token", "list", cwd=tmp_path, settings=settings)

    for refused in (served, listed):
        assert refused.returncode == 2, refused.stderr
        assert "is not text UTF-8 can carry" in refused.stderr
    assert not (tmp_path / "memory.db").exists()


def test_a_hand_edited_label_over_200_characters_stops_the_server_at_start(
    tmp_path: Path,
) -> None:
    """The limit `token create` keeps holds for a hand-edited file too."""
    path = tmp_path / "tokens.json"
    create_token(path, ALICE, label="bot")
    document = json.loads(path.read_text())
    document["tokens"][0]["label"] = "b" * 201
    path.write_text(json.dumps(document))
    settings = {
        "WENCHANG_TOKENS_FILE": str(path),
        "WENCHANG_STORAGE": f"sqlite:///{tmp_path / 'memory.db'}",
    }

    served = run_wenchang("serve", "--port", "0", cwd=tmp_path, settings=settings)

    assert served.returncode == 2, served.stderr
    assert "201 characters, over the 200-character limit" in served.stderr
    assert not (tmp_path / "memory.db").exists()


@pytest.mark.parametrize("edit", ["{not json", '{"tokens": [{"label": "\\ud800"}]}'])
def test_a_bad_edit_of_a_running_servers_token_file_is_a_transient_refusal(
    tmp_path: Path, edit: str
) -> None:
    """Once the file stops parsing, every /v1 and /mcp request gets 503
    BACKEND_UNAVAILABLE naming the token file (no token keeps working, none
    answers 500); the repaired file is served again without a restart."""
    tokens = tmp_path / "tokens.json"
    secret, _ = create_token(tokens, ALICE)
    good = tokens.read_text()
    settings = {"WENCHANG_STORAGE": "memory://", "WENCHANG_TOKENS_FILE": str(tokens)}
    auth = {"Authorization": f"Bearer {secret}"}

    def until(url: str, status: int) -> httpx.Response:
        deadline = time.monotonic() + REVOCATION_BOUND_SECONDS
        answer = httpx.get(url, headers=auth)
        while answer.status_code != status and time.monotonic() < deadline:
            time.sleep(0.2)
            answer = httpx.get(url, headers=auth)
        return answer

    with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as server:
        index = f"{server.url}/v1/index"
        assert until(index, 200).status_code == 200
        tokens.write_text(edit)
        refused = until(index, 503)
        mcp = httpx.post(
            f"{server.url}/mcp",
            headers={**auth, "Accept": "application/json, text/event-stream"},
            json=MCP_WRITE,
        )
        tokens.write_text(good)
        repaired = until(index, 200)

    for answer in (refused, mcp):
        assert answer.status_code == 503, answer.text
        assert answer.headers["Retry-After"]
        error = answer.json()
        assert error["code"] == "BACKEND_UNAVAILABLE"
        assert error["details"]["category"] == "transient"
        assert "token file" in error["message"]
    assert repaired.status_code == 200
