"""An ``OAuthContext`` over the in-process store, a settable clock and a record
of the audit events the OAuth use cases send."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from app.features.oauth.ports import ClientDocuments, ClientRecord, OAuthContext
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.shared.errors.oauth import OAuthError
from app.shared.identity import Grant

DAY = 86_400.0
ISSUER = "https://memory.example"
ACCESS_TTL = 3600.0
UNUSED_CLIENT_TTL = 30 * DAY


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class Events:
    """Every event sent, as (operation, client id, grants)."""

    sent: list[tuple[str, str, dict[str, Grant]]] = field(
        default_factory=list[tuple[str, str, dict[str, Grant]]]
    )

    async def __call__(
        self, operation: str, client_id: str, grants: Mapping[str, Grant]
    ) -> None:
        self.sent.append((operation, client_id, dict(grants)))

    def operations(self) -> list[str]:
        return [operation for operation, _, _ in self.sent]


async def no_documents(url: str) -> ClientRecord:
    raise OAuthError("invalid_client", f"no document at {url}")


def oauth_context(
    clock: Clock | None = None,
    store: MemoryOAuthStore | None = None,
    *,
    events: Events | None = None,
    documents: ClientDocuments = no_documents,
) -> OAuthContext:
    return OAuthContext(
        store=MemoryOAuthStore() if store is None else store,
        issuer=ISSUER,
        access_ttl=ACCESS_TTL,
        unused_client_ttl=UNUSED_CLIENT_TTL,
        events=Events() if events is None else events,
        documents=documents,
        seal_key=b"k" * 32,
        clock=Clock() if clock is None else clock,
    )
