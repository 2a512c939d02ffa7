"""Resolvers of bearer credentials: the token file's, and one fixed identity."""

import hmac
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from app.infra.token_file import (
    RELOAD_INTERVAL_SECONDS,
    TokenRecord,
    parse_token_file,
    read_token_text,
)
from app.infra.token_file import token_digest as _digest
from app.shared.identity import Identity, ResolutionFailure


class TokenFileResolver:
    """Resolves bearer tokens against the file, re-reading it when it changes."""

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._path = path
        self._clock = clock
        self._by_digest: dict[str, tuple[TokenRecord, Identity]] = {}
        self._text: str | None = None
        self._checked = 0.0
        self._refresh()

    def _refresh(self) -> None:
        # Compare contents, not stat(): two replacements within one mtime tick
        # can leave size and mtime equal, and the inode number may be reused.
        text = read_token_text(self._path)
        if text != self._text:
            tokens = parse_token_file(self._path, text).tokens
            # Each token's identity built once per read of the file, not per request.
            self._by_digest = {
                record.digest: (record, _identity(record)) for record in tokens
            }
            self._text = text
        self._checked = time.monotonic()

    def resolve(self, credentials: str) -> Identity | ResolutionFailure:
        if time.monotonic() - self._checked >= RELOAD_INTERVAL_SECONDS:
            self._refresh()
        digest = _digest(credentials)
        found = self._by_digest.get(digest)
        if found is None or not hmac.compare_digest(found[0].digest, digest):
            return ResolutionFailure("The bearer token is not valid.")
        record, identity = found
        if record.expires_at is not None and record.expires_at <= self._clock():
            return ResolutionFailure("The bearer token has expired.")
        return identity


def _identity(record: TokenRecord) -> Identity:
    return Identity(grants=record.grants, label=record.label, token_id=record.token_id)


class FixedResolver:
    """One identity for every credential: stdio sessions and tests."""

    def __init__(self, identity: Identity) -> None:
        self._identity = identity

    def resolve(self, credentials: str) -> Identity | ResolutionFailure:
        return self._identity
