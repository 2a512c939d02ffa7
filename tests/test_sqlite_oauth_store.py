"""The SQLite OAuth store keeps what the in-process store keeps, and in its file.

Each case runs on both stores (``memory://`` and the SQLite file), so the file's
answers are the in-process store's: a refresh token is used once, a family or a
client is revoked with a count, the token list shows each client's newest live
token. The SQLite store alone: a store opened again on the same file reads what
the first wrote, and a closed store (its connection closed) opens again when used.
"""

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from app.features.oauth.ports import (
    ClientKind,
    ClientRecord,
    CodeRecord,
    OAuthStore,
    TokenRecord,
)
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.infra.sqlite.oauth_store import SqliteOAuthStore
from app.shared.identity import Grant

GRANTS = {"team": Grant("acme", "member"), "user": Grant("ada", "owner")}


def client(client_id: str, kind: ClientKind = "registered") -> ClientRecord:
    return ClientRecord(
        client_id, f"{client_id} app", ("https://a.example/cb",), kind, 1.5, None
    )


def token(
    digest: str,
    client_id: str,
    expires_at: float = 1e12,
    *,
    family: str = "f",
    scopes: tuple[str, ...] = ("memory",),
) -> TokenRecord:
    return TokenRecord(
        digest, "refresh", family, client_id, scopes, GRANTS, "r", expires_at
    )


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OAuthStore]:
    if request.param == "memory":
        yield MemoryOAuthStore()
        return
    opened = SqliteOAuthStore(tmp_path / "oauth.db")
    yield opened
    opened.close()


def test_a_refresh_token_is_marked_used_once(store: OAuthStore) -> None:
    store.save_tokens([token("t1", "a"), token("t2", "a")])

    assert store.mark_used("t1") is True
    assert store.mark_used("t1") is False
    assert store.mark_used("absent") is False

    assert store.find_token("t1") == replace(token("t1", "a"), used=True)
    assert store.find_token("t2") == token("t2", "a")


def test_revoking_a_family_counts_and_drops_its_tokens_only(store: OAuthStore) -> None:
    store.save_tokens(
        [
            token("a1", "a", family="one"),
            token("a2", "a", family="one"),
            token("b1", "a", family="two"),
        ]
    )

    assert store.revoke_family("one") == 2
    assert store.revoke_family("one") == 0
    assert [store.find_token(d) is None for d in ("a1", "a2", "b1")] == [
        True,
        True,
        False,
    ]


def test_revoking_a_client_counts_and_drops_its_tokens_only(store: OAuthStore) -> None:
    store.save_tokens([token("a1", "a"), token("a2", "a"), token("b1", "b")])

    assert store.revoke_client("a") == 2
    assert store.revoke_client("a") == 0
    assert store.find_token("a1") is None
    assert store.find_token("b1") == token("b1", "b")


def test_clients_with_live_tokens_show_their_newest_token(store: OAuthStore) -> None:
    for name in ("b", "a", "gone"):
        store.save_client(
            client(name, "metadata_document" if name == "a" else "registered")
        )
    store.save_tokens(
        [
            token("a-late", "a", 30.0, scopes=("memory", "late")),
            token("a-soon", "a", 20.0, scopes=("soon",)),
            token("b-now", "b", 10.0, scopes=("now",)),
            token("b-live", "b", 11.0, scopes=("live",)),
            token("gone-dead", "gone", 10.0),
            token("stranger", "unknown", 50.0),
        ]
    )

    listed = store.clients_with_tokens(10.0)

    assert [(g.client, g.scopes, g.grants) for g in listed] == [
        (client("a", "metadata_document"), ("memory", "late"), GRANTS),
        (client("b"), ("live",), GRANTS),
    ]
    assert store.clients_with_tokens(30.0) == []


def test_a_code_is_taken_once_whole_and_swept_at_its_expiry(store: OAuthStore) -> None:
    code = CodeRecord(
        "c",
        "a",
        "https://a.example/cb",
        "x" * 43,
        ("memory", "read"),
        GRANTS,
        "r",
        10.0,
    )
    store.save_code(code)
    store.save_code(replace(code, digest="d"))
    store.save_tokens([token("t-old", "a", 10.0), token("t-live", "a", 10.5)])

    store.sweep(9.5)
    assert store.take_code("c") == code
    assert store.take_code("c") is None
    store.sweep(10.0)

    assert store.take_code("d") is None
    assert store.find_token("t-old") is None
    assert store.find_token("t-live") == token("t-live", "a", 10.5)


def test_unused_registered_clients_before_the_cutoff_are_dropped_with_their_tokens(
    store: OAuthStore,
) -> None:
    store.save_client(replace(client("old"), created_at=0.5))
    store.save_client(replace(client("at-cutoff"), created_at=1.0))
    store.save_client(replace(client("used"), created_at=0.25, last_used_at=1.0))
    store.save_client(replace(client("touched"), created_at=0.25))
    store.save_client(replace(client("doc", "metadata_document"), created_at=0.5))
    store.save_tokens([token("t-old", "old"), token("t-used", "used")])
    store.touch_client("touched", 2.0)

    assert store.drop_unused_clients(1.0) == 1

    assert store.get_client("old") is None
    for kept in ("at-cutoff", "used", "touched", "doc"):
        assert store.get_client(kept) is not None, kept
    assert store.find_token("t-old") is None
    assert store.find_token("t-used") is not None


def test_a_second_store_on_the_file_reads_what_the_first_wrote(
    tmp_path: Path,
) -> None:
    first = SqliteOAuthStore(tmp_path / "oauth.db")
    first.save_client(client("a"))
    first.save_tokens([token("t1", "a")])
    first.touch_client("a", 7.0)

    second = SqliteOAuthStore(tmp_path / "oauth.db")
    try:
        assert second.mark_used("t1") is True
        assert first.mark_used("t1") is False  # one winner across processes
        got = second.get_client("a")
        assert got is not None and got.last_used_at == 7.0
    finally:
        first.close()
        second.close()


def test_a_store_opens_its_file_when_used_and_again_after_a_close(
    tmp_path: Path,
) -> None:
    path = tmp_path / "oauth.db"
    SqliteOAuthStore(path).close()  # never used: no file, nothing to close
    assert not path.exists()
    store = SqliteOAuthStore(path)
    store.save_tokens([token("t1", "a")])
    wal = path.with_name("oauth.db-wal")
    assert wal.exists()

    store.close()
    assert not wal.exists()  # its last connection closed
    store.close()  # closing twice is harmless

    assert store.find_token("t1") == token("t1", "a")
    store.close()


def test_a_store_opened_on_one_thread_serves_another(tmp_path: Path) -> None:
    store = SqliteOAuthStore(tmp_path / "oauth.db")
    store.save_tokens([token("t1", "a")])  # its connection opened on this thread
    try:
        with ThreadPoolExecutor(1) as pool:  # the CLI's or the server's threads
            assert pool.submit(store.find_token, "t1").result() == token("t1", "a")
    finally:
        store.close()
