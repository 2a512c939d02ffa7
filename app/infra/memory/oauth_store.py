"""OAuth clients, codes and tokens in this process's memory (``memory://``)."""

import dataclasses
from collections.abc import Callable, Sequence

from app.features.oauth.ports import (
    ClientGrants,
    ClientRecord,
    CodeRecord,
    TokenRecord,
)


class MemoryOAuthStore:
    def __init__(self) -> None:
        self._clients: dict[str, ClientRecord] = {}
        self._codes: dict[str, CodeRecord] = {}
        self._tokens: dict[str, TokenRecord] = {}

    def save_client(self, client: ClientRecord) -> None:
        self._clients[client.client_id] = client

    def get_client(self, client_id: str) -> ClientRecord | None:
        return self._clients.get(client_id)

    def touch_client(self, client_id: str, at: float) -> None:
        client = self._clients.get(client_id)
        if client is not None:
            self._clients[client_id] = dataclasses.replace(client, last_used_at=at)

    def drop_unused_clients(self, registered_before: float) -> int:
        stale = [
            client.client_id
            for client in self._clients.values()
            if client.kind == "registered"
            and client.created_at < registered_before
            and (client.last_used_at or 0) < registered_before
        ]
        for client_id in stale:
            del self._clients[client_id]
            self.revoke_client(client_id)
        return len(stale)

    def save_code(self, code: CodeRecord) -> None:
        self._codes[code.digest] = code

    def take_code(self, digest: str) -> CodeRecord | None:
        return self._codes.pop(digest, None)

    def save_tokens(self, tokens: Sequence[TokenRecord]) -> None:
        for token in tokens:
            self._tokens[token.digest] = token

    def find_token(self, digest: str) -> TokenRecord | None:
        return self._tokens.get(digest)

    def mark_used(self, digest: str) -> bool:
        token = self._tokens.get(digest)
        if token is None or token.used:
            return False
        self._tokens[digest] = dataclasses.replace(token, used=True)
        return True

    def _drop(self, keep: Callable[[TokenRecord], bool]) -> int:
        before = len(self._tokens)
        self._tokens = {k: t for k, t in self._tokens.items() if keep(t)}
        return before - len(self._tokens)

    def revoke_family(self, family: str) -> int:
        return self._drop(lambda token: token.family != family)

    def revoke_client(self, client_id: str) -> int:
        return self._drop(lambda token: token.client_id != client_id)

    def clients_with_tokens(self, now: float) -> list[ClientGrants]:
        newest: dict[str, TokenRecord] = {}
        for token in self._tokens.values():
            if token.expires_at > now:
                held = newest.get(token.client_id)
                if held is None or token.expires_at > held.expires_at:
                    newest[token.client_id] = token
        return [
            ClientGrants(self._clients[client_id], token.grants, token.scopes)
            for client_id, token in sorted(newest.items())
            if client_id in self._clients
        ]

    def sweep(self, now: float) -> None:
        self._codes = {k: c for k, c in self._codes.items() if c.expires_at > now}
        self._drop(lambda token: token.expires_at > now)
