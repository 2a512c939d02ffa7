"""The in-process OAuth store (``memory://``): which clients an expiry drops,
what a client's revocation takes with it, and a code's last moment."""

from app.features.oauth.ports import ClientRecord, CodeRecord, TokenRecord
from app.infra.memory.oauth_store import MemoryOAuthStore


def client(
    client_id: str, created_at: float, last_used_at: float | None
) -> ClientRecord:
    return ClientRecord(
        client_id,
        client_id,
        ("https://a.example/cb",),
        "registered",
        created_at,
        last_used_at,
    )


def token(digest: str, client_id: str, expires_at: float = 1e12) -> TokenRecord:
    return TokenRecord(
        digest, "access", f"f-{digest}", client_id, (digest,), {}, "r", expires_at
    )


def test_unused_clients_before_the_cutoff_are_dropped_with_their_tokens() -> None:
    store = MemoryOAuthStore()
    store.save_client(client("old", 0.5, None))
    store.save_client(client("at-cutoff", 1.0, None))
    store.save_client(client("used", 0.25, 1.0))
    store.save_tokens([token("t-old", "old"), token("t-used", "used")])

    assert store.drop_unused_clients(1.0) == 1

    assert store.get_client("old") is None
    assert store.get_client("at-cutoff") is not None
    assert store.get_client("used") is not None
    assert store.find_token("t-old") is None
    assert store.find_token("t-used") is not None


def test_revoking_a_client_counts_and_drops_its_tokens_only() -> None:
    store = MemoryOAuthStore()
    store.save_tokens([token("a1", "a"), token("a2", "a"), token("b1", "b")])
    assert store.revoke_client("a") == 2
    assert store.revoke_client("a") == 0
    assert [store.find_token(d) is None for d in ("a1", "a2", "b1")] == [
        True,
        True,
        False,
    ]


def test_a_code_is_swept_at_its_expiry() -> None:
    store = MemoryOAuthStore()
    code = CodeRecord("c", "a", "https://a.example/cb", "x" * 43, (), {}, "r", 10.0)
    store.save_code(code)
    store.sweep(9.5)
    assert store.take_code("c") == code
    store.save_code(code)
    store.sweep(10.0)
    assert store.take_code("c") is None


def test_clients_with_live_tokens_show_their_newest_token_s_scopes() -> None:
    store = MemoryOAuthStore()
    for name in ("b", "a", "gone"):
        store.save_client(client(name, 0.0, None))
    store.save_tokens(
        [
            token("a-late", "a", 30.0),
            token("a-soon", "a", 20.0),
            token("b-now", "b", 10.0),
            token("b-live", "b", 11.0),
            token("gone-dead", "gone", 10.0),
            token("stranger", "unknown", 50.0),
        ]
    )
    listed = store.clients_with_tokens(10.0)
    assert [(g.client.client_id, g.scopes, g.grants) for g in listed] == [
        ("a", ("a-late",), {}),
        ("b", ("b-live",), {}),
    ]
