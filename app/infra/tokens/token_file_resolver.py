"""Resolvers of bearer credentials: the token file's, and one fixed identity."""

import hmac
import logging
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from app.infra.tokens.token_file import (
    RELOAD_INTERVAL_SECONDS,
    TokenRecord,
    parse_token_file,
    read_token_text,
)
from app.infra.tokens.token_file import token_digest as _digest
from app.shared.clock import utc_now
from app.shared.errors import backend_unavailable_error
from app.shared.identity import Identity, ResolutionFailure

_log = logging.getLogger(__name__)
UNREADABLE = (
    "The server's token file cannot be read, so no bearer token can be checked; "
    "its operator must repair it. Retry later."
)


class TokenFileResolver:
    """Resolves bearer tokens against the file, re-reading it when it changes."""

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._path = path
        self._clock = clock
        self._by_digest: dict[str, tuple[TokenRecord, Identity]] = {}
        self._digests: dict[str, str] = {}
        """Digests of the credentials that matched a token of the file as read."""
        self._text: str | None = None
        self._checked = 0.0
        self._broken = False
        """The file stopped parsing while the server ran (at start it is fatal)."""
        self._refresh(read_token_text(self._path))

    def _refresh(self, text: str | None) -> None:
        # Compare contents, not stat(): two replacements within one mtime tick
        # can leave size and mtime equal, and the inode number may be reused.
        if text != self._text:
            tokens = parse_token_file(self._path, text).tokens
            # Each token's identity built once per read of the file, not per request.
            self._by_digest = {
                record.digest: (record, _identity(record)) for record in tokens
            }
            self._digests = {}
            self._text = text
        self._checked = time.monotonic()

    def _reload(self) -> None:
        # A bad edit must neither keep the old tokens (an edit that revokes one
        # would leave it working) nor crash each request: every caller gets a
        # transient refusal until the file parses again.
        try:
            self._refresh(read_token_text(self._path))
        except ValueError as exc:
            if not self._broken:
                _log.error("token file unreadable, refusing every request: %s", exc)
            self._broken = True
            self._checked = time.monotonic()
        else:
            self._broken = False

    def resolve(self, credentials: str) -> Identity | ResolutionFailure:
        if time.monotonic() - self._checked >= RELOAD_INTERVAL_SECONDS:
            self._reload()
        if self._broken:
            raise backend_unavailable_error("unavailable", UNREADABLE)
        # A client sends its token on every request: the digest of one that
        # matched is kept until the file changes (one per token of the file, so
        # a stream of bad tokens keeps nothing), sparing a SHA-256 per request.
        digest = self._digests.get(credentials)
        if digest is None:
            digest = _digest(credentials)
        found = self._by_digest.get(digest)
        if found is None or not hmac.compare_digest(found[0].digest, digest):
            return ResolutionFailure("The bearer token is not valid.")
        self._digests[credentials] = digest
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
