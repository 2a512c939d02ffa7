"""The token file and its resolver at their edges: what a bad file's refusal
says, what an absent, blank or older file means, the file's shape, new
tokens' forms, and a running resolver meeting a broken file and its repair."""

import logging
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.infra.tokens.token_file import (
    create_first_token,
    create_token,
    ensure_cursor_secret,
    parse_token_file,
    read_token_file,
    read_token_text,
)
from app.infra.tokens.token_file_resolver import UNREADABLE, TokenFileResolver
from app.shared.identity import Grant, Identity, ResolutionFailure

OWNER = {"user": Grant(entity_id="alice", role="owner")}
FIX = "; move it aside and run `wenchang token create` to start a new one"
BOUND_SECONDS = 5.0


def test_a_file_that_is_no_token_file_is_named_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    for read in (
        lambda: parse_token_file(path, "{not json"),
        lambda: read_token_file(path),
        lambda: ensure_cursor_secret(path),
        lambda: TokenFileResolver(path),
    ):
        with pytest.raises(ValueError) as raised:
            read()
        message = str(raised.value)
        assert message.startswith(f"token file {path} is not a Wenchang token file (")
        assert "Expecting property name" in message and message.endswith(FIX)

    with pytest.raises(ValueError) as unreadable:
        read_token_text(tmp_path)
    assert str(unreadable.value) == (
        f"token file {tmp_path} is not a Wenchang token file "
        f"([Errno 21] Is a directory: '{tmp_path}'){FIX}"
    )


def test_absent_blank_and_older_files(tmp_path: Path) -> None:
    absent = parse_token_file(tmp_path / "none.json", None)
    blank = parse_token_file(tmp_path / "blank.json", " \n")
    older = parse_token_file(
        tmp_path / "t.json", '{"cursor_secret": "s", "tokens": []}'
    )
    assert absent.issued is False and blank.issued is True and older.issued is True
    for contents in (absent, blank):
        assert len(contents.cursor_secret) == 64
        int(contents.cursor_secret, 16)


def test_the_file_is_indented_json_in_a_directory_made_for_it(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "tokens.json"
    create_token(path, OWNER)
    lines = path.read_text().splitlines()
    assert lines[0] == "{" and lines[1].startswith('  "cursor_secret": ')


def test_new_tokens_have_their_forms_and_keep_their_label(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    first = create_first_token(path, OWNER, label="bot")
    assert first is not None
    secret, record = first
    assert record.label == "bot" and read_token_file(path).tokens[0].label == "bot"
    assert secret.startswith("wct_") and len(secret) == 4 + 43
    assert record.token_id.startswith("tok_") and len(record.token_id) == 4 + 12
    int(record.token_id[4:], 16)

    with pytest.raises(ValueError) as refused:
        create_token(path, {})
    assert str(refused.value) == (
        "a token needs at least one grant, e.g. --grant user=alice:owner"
    )
    with pytest.raises(ValueError, match=r"^grant 'user=a/b:owner' has an invalid"):
        create_token(path, {"user": Grant(entity_id="a/b", role="owner")})


def test_a_resolver_over_no_file_refuses_and_names_what_it_resolves(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.json"
    refusal = TokenFileResolver(path).resolve("wct_nothing")
    assert isinstance(refusal, ResolutionFailure)

    secret, record = create_token(path, OWNER)
    resolver = TokenFileResolver(path)
    for _ in range(2):  # the second from the digest kept for it
        identity = resolver.resolve(secret)
        assert isinstance(identity, Identity)
        assert identity.token_id == record.token_id

    later = datetime.now(UTC) + timedelta(days=2)
    soon, _ = create_token(path, OWNER, expires_in_days=1)
    answer = TokenFileResolver(path, clock=lambda: later).resolve(soon)
    assert isinstance(answer, ResolutionFailure)
    assert answer.detail == "The bearer token has expired."


def refused(resolver: TokenFileResolver, secret: str) -> AppError:
    deadline = time.monotonic() + BOUND_SECONDS
    while True:
        try:
            resolver.resolve(secret)
        except AppError as exc:
            return exc
        assert time.monotonic() < deadline, "the broken file is still trusted"
        time.sleep(0.05)


def test_a_broken_file_refuses_every_request_logs_once_and_heals(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "tokens.json"
    secret, _ = create_token(path, OWNER)
    good = path.read_text()
    resolver = TokenFileResolver(path)
    path.write_text("{not json")

    with caplog.at_level(logging.ERROR):
        error = refused(resolver, secret)
        assert len(caplog.records) == 1  # logged at the first failed reading
        time.sleep(1.1)  # past the reload interval: the file is read again
        with pytest.raises(AppError):
            resolver.resolve(secret)

    assert error.code == "BACKEND_UNAVAILABLE"
    assert error.details["reason"] == "unavailable"
    assert str(error).startswith(UNREADABLE)
    [logged] = [r.getMessage() for r in caplog.records]
    assert logged.startswith(
        f"token file unreadable, refusing every request: token file {path} is not"
    )

    path.write_text(good)
    deadline = time.monotonic() + BOUND_SECONDS
    while True:
        try:
            if isinstance(resolver.resolve(secret), Identity):
                break
        except AppError:
            pass
        assert time.monotonic() < deadline, "the repaired file is still refused"
        time.sleep(0.05)
