"""`wenchang token list|revoke` for OAuth clients: who holds tokens; ending them."""

import time

from app.features.oauth.domain import client_token_id, grant_text
from app.infra.sqlite.oauth_store import SqliteOAuthStore
from app.server.settings import Settings


def _store(settings: Settings) -> SqliteOAuthStore | None:
    # memory:// keeps OAuth state inside the serving process: nothing to list.
    path = settings.oauth_store_path
    return SqliteOAuthStore(path) if path is not None and path.exists() else None


def oauth_client_lines(settings: Settings) -> list[str]:
    """One line per OAuth client holding an unexpired token: its audit token id,
    client id, name, grants and scopes."""
    store = _store(settings)
    if store is None:
        return []
    try:
        held = store.clients_with_tokens(time.time())
    finally:
        store.close()
    return [
        f"{client_token_id(c.client.client_id)}  oauth client {c.client.client_id}  "
        f"{c.client.name or '-'}  "
        f"{' '.join(grant_text(s, g) for s, g in sorted(c.grants.items()))}  "
        f"scopes {' '.join(c.scopes)}"
        for c in held
    ]


def revoke_oauth_client(settings: Settings, client_id: str) -> int | None:
    """Revokes every token of ``client_id``; None if no such client is known."""
    store = _store(settings)
    if store is None:
        return None
    try:
        if store.get_client(client_id) is None:
            return None
        return store.revoke_client(client_id)
    finally:
        store.close()
