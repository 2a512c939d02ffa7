"""Bearer tokens kept in a JSON file as SHA-256 hashes, with grants and expiry.

The secret of a token is shown once, when it is created; the file only holds
its hash, so reading the file never reveals a usable token. The file is written
atomically with mode 0600 and re-read when it changes on disk, so a token
created or revoked by the CLI takes effect in a running server.
"""

import fcntl
import hashlib
import json
import os
import secrets
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import NotRequired, TypedDict

from app.infra.durable_files import replace_file
from app.shared.clock import utc_now
from app.shared.identity import Grant, require_grant_segments

TOKEN_PREFIX = "wct_"
RELOAD_INTERVAL_SECONDS = 1.0
MAX_LABEL_CHARACTERS = 200
"""As an OAuth client's name: a label is a source of every file its token
writes, and on GCS a write's custom metadata may take 6,656 bytes, description
and aliases up to 6,144 of them; a label of a few KiB would get every write of
its token refused there."""


@dataclass(frozen=True, slots=True)
class TokenRecord:
    token_id: str
    digest: str
    grants: Mapping[str, Grant]
    label: str | None
    created_at: datetime
    expires_at: datetime | None


class GrantJson(TypedDict):
    entity_id: str
    role: str


class TokenJson(TypedDict):
    """A token as the file holds it (a hand-edited file may leave out the
    optional fields; one of another shape is refused when it is read)."""

    id: str
    sha256: str
    label: NotRequired[str | None]
    grants: dict[str, GrantJson]
    created_at: str
    expires_at: NotRequired[str | None]


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _record_to_json(record: TokenRecord) -> TokenJson:
    return {
        "id": record.token_id,
        "sha256": record.digest,
        "label": record.label,
        "grants": {
            scope: {"entity_id": grant.entity_id, "role": grant.role}
            for scope, grant in record.grants.items()
        },
        "created_at": record.created_at.isoformat(),
        "expires_at": record.expires_at.isoformat() if record.expires_at else None,
    }


def _checked(grants: Mapping[str, Grant]) -> dict[str, Grant]:
    for scope, grant in grants.items():
        require_grant_segments(scope, grant, f"{scope}={grant.entity_id}:{grant.role}")
    return dict(grants)


def _record_from_json(raw: TokenJson) -> TokenRecord:
    expires = raw.get("expires_at")
    return TokenRecord(
        token_id=raw["id"],
        digest=raw["sha256"],
        grants=_checked(
            {
                scope: Grant(entity_id=grant["entity_id"], role=grant["role"])
                for scope, grant in raw["grants"].items()
            }
        ),
        label=_text_label(raw.get("label")),
        created_at=datetime.fromisoformat(raw["created_at"]),
        expires_at=datetime.fromisoformat(expires) if expires else None,
    )


@dataclass(frozen=True, slots=True)
class TokenFileContents:
    cursor_secret: str
    tokens: tuple[TokenRecord, ...]
    issued: bool = True
    """Whether a token was ever created in this file: a file emptied by
    revocation (or left empty by an operator) means no access, never a new
    first token."""


def _not_a_token_file(path: Path, exc: Exception) -> ValueError:
    return ValueError(
        f"token file {path} is not a Wenchang token file ({exc}); move it aside "
        "and run `wenchang token create` to start a new one"
    )


def read_token_text(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _not_a_token_file(path, exc) from exc


def parse_token_file(path: Path, text: str | None) -> TokenFileContents:
    if text is None:
        return TokenFileContents(secrets.token_hex(32), (), issued=False)
    if not text.strip():
        return TokenFileContents(secrets.token_hex(32), (), issued=True)
    try:
        raw = json.loads(text)
        return TokenFileContents(
            cursor_secret=raw["cursor_secret"],
            tokens=tuple(_record_from_json(item) for item in raw["tokens"]),
            issued=bool(raw.get("tokens_issued", True)),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise _not_a_token_file(path, exc) from exc


def read_token_file(path: Path) -> TokenFileContents:
    """The file's contents; an absent file is empty (with a fresh secret)."""
    return parse_token_file(path, read_token_text(path))


def write_token_file(path: Path, contents: TokenFileContents) -> None:
    """Replace the file atomically; it is created with mode 0600."""
    document = {
        "cursor_secret": contents.cursor_secret,
        "tokens_issued": contents.issued,
        "tokens": [_record_to_json(record) for record in contents.tokens],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=2)
    replace_file(os.fspath(path), text.encode(), mode=0o600)


@contextmanager
def _exclusive(path: Path) -> Generator[None]:
    """Serialise read-modify-write of the token file across processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(f".{path.name}.lock")
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _text_label(label: object) -> str | None:
    # argv holds undecodable bytes as lone surrogates, and a hand-edited file
    # can hold them as JSON escapes: such a label would be every write's actor
    # and source, which no store can encode (a 500 per write).
    if label is None:
        return None
    if isinstance(label, str):
        try:
            label.encode()
        except UnicodeEncodeError:
            pass
        else:
            if len(label) > MAX_LABEL_CHARACTERS:
                raise ValueError(
                    f"the label {label[:40]!r}... has {len(label)} characters, "
                    f"over the {MAX_LABEL_CHARACTERS}-character limit: use a "
                    "shorter one"
                )
            return label
    raise ValueError(f"the label {label!r} is not text UTF-8 can carry: use another")


def _new_token(
    grants: Mapping[str, Grant],
    label: str | None,
    expires_in_days: float | None,
    now: datetime | None,
) -> tuple[str, TokenRecord]:
    if not grants:
        raise ValueError(
            "a token needs at least one grant, e.g. --grant user=alice:owner"
        )
    _text_label(label)
    created = now or utc_now()
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    record = TokenRecord(
        token_id="tok_" + secrets.token_hex(6),
        digest=token_digest(secret),
        grants=_checked(grants),
        label=label,
        created_at=created,
        expires_at=created + timedelta(days=expires_in_days)
        if expires_in_days
        else None,
    )
    return secret, record


def _append(path: Path, contents: TokenFileContents, record: TokenRecord) -> None:
    tokens = (*contents.tokens, record)
    write_token_file(path, TokenFileContents(contents.cursor_secret, tokens))


def create_token(
    path: Path,
    grants: Mapping[str, Grant],
    *,
    label: str | None = None,
    expires_in_days: float | None = None,
    now: datetime | None = None,
) -> tuple[str, TokenRecord]:
    """Add a token to the file; returns its secret (shown once) and its record."""
    secret, record = _new_token(grants, label, expires_in_days, now)
    with _exclusive(path):
        _append(path, read_token_file(path), record)
    return secret, record


def create_first_token(
    path: Path, grants: Mapping[str, Grant], *, label: str
) -> tuple[str, TokenRecord] | None:
    """A first token, only if no token was ever created in the file.

    A missing file (or one made only to hold the cursor secret) gets one; a
    file whose tokens were all revoked, or that an operator left empty, keeps
    meaning "no access".
    """
    secret, record = _new_token(grants, label, None, None)
    with _exclusive(path):
        contents = read_token_file(path)
        if contents.issued:
            return None
        _append(path, contents, record)
    return secret, record


def revoke_token(path: Path, token_id: str) -> bool:
    with _exclusive(path):
        contents = read_token_file(path)
        kept = tuple(item for item in contents.tokens if item.token_id != token_id)
        if len(kept) == len(contents.tokens):
            return False
        write_token_file(path, TokenFileContents(contents.cursor_secret, kept))
    return True


def ensure_cursor_secret(path: Path) -> str:
    """The secret that signs list cursors, shared by every replica using this file."""
    with _exclusive(path):
        text = read_token_text(path)
        contents = parse_token_file(path, text)
        if text is None or not text.strip():
            write_token_file(path, contents)
    return contents.cursor_secret
