"""LangGraph's store kept in Wenchang: the same operations on LangGraph's
``InMemoryStore`` and on ``WenchangStore`` against a real server give the same
answers (timestamps aside). The cases follow LangGraph's own store tests: get,
put (upsert), delete, search (prefix, filter, limit/offset), list_namespaces
(prefix, suffix, max_depth, limit/offset), batches, and namespaces and keys of
any characters. Runs on the backend the test run selects."""

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from wenchang_client import AsyncMemoryClient
from wenchang_client.langgraph import WenchangStore

from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant, Identity
from tests.support.storage_adapters import storage_url_for_tests
from tests.support.transports import TokenRegistry, serve_in_thread


class Server:
    def __init__(self, url: str, tokens: TokenRegistry) -> None:
        self.url = url
        self.tokens = tokens

    def token(self) -> str:
        grants = {"user": Grant(f"e-{uuid.uuid4().hex[:12]}", "owner")}
        return self.tokens.issue(Identity(grants=grants, label="langgraph"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root: Path = tmp_path_factory.mktemp("langgraph")
    settings = Settings(
        storage=storage_url_for_tests(root),
        tokens_file=str(root / "tokens.json"),
        cursor_secret="langgraph-tests-secret",
        list_page_size=3,  # listings of several pages
    )
    tokens = TokenRegistry()
    with serve_in_thread(build_app(settings, resolver=tokens)) as url:
        yield Server(url, tokens)


@pytest.fixture
def token(server: Server) -> str:
    return server.token()


@pytest.fixture
async def store(server: Server, token: str) -> AsyncIterator[WenchangStore]:
    opened = WenchangStore(server.url, token, "user")
    yield opened
    await opened.aclose()


def seen(answer: object) -> object:
    """An answer without its timestamps."""
    if isinstance(answer, Item):
        score = getattr(answer, "score", None)
        return ("item", answer.namespace, answer.key, answer.value, score)
    if isinstance(answer, list):
        return [seen(part) for part in cast(list[object], answer)]
    return answer


type Case = Callable[[BaseStore], Awaitable[list[object]]]


async def put_get_delete(s: BaseStore) -> list[object]:
    await s.aput(("users", "alice"), "prefs", {"theme": "dark", "n": 1})
    first = await s.aget(("users", "alice"), "prefs")
    await s.aput(("users", "alice"), "prefs", {"theme": "light", "nested": {"a": [1]}})
    second = await s.aget(("users", "alice"), "prefs")
    missing = await s.aget(("users", "alice"), "other")
    await s.adelete(("users", "alice"), "prefs")
    gone = await s.aget(("users", "alice"), "prefs")
    await s.adelete(("users", "alice"), "never")
    return [first, second, missing, gone]


async def odd_namespaces_and_keys(s: BaseStore) -> list[object]:
    places = [
        (("a",), "k"),
        (("Ünïcode", "名前", "with space"), "key/with/slashes"),
        (("colon:label", "per%cent", "back\\slash"), "dots.in.key"),
        (("x",), ".."),
        (("x",), "."),
        (("x",), "tab\tand\nnewline"),
        (("x", "zero\u200bwidth"), "\u2028line sep"),
        (("long",), "k" * 300),
        (("deep", "a", "b", "c", "d", "e", "f"), ":"),
    ]
    for number, (namespace, key) in enumerate(places):
        await s.aput(namespace, key, {"n": number})
    got = [await s.aget(namespace, key) for namespace, key in places]
    return [got, await s.asearch(()), await s.alist_namespaces()]


async def values_round_trip(s: BaseStore) -> list[object]:
    values: list[dict[str, Any]] = [
        {},
        {"content": "- [stated] Likes tea.\n", "kind": "preference", "tags": ["a"]},
        {"kind": "x", "content": "markdown after another key"},
        {"content": 5},
        {"f": 1.5, "i": -3, "b": True, "none": None, "s": 'ü\n"q"'},
        {"content": "", "deep": {"content": "inner"}},
    ]
    for number, value in enumerate(values):
        await s.aput(("v",), f"k{number}", value)
    return [await s.aget(("v",), f"k{number}") for number in range(len(values))]


async def search_prefix_filter_paging(s: BaseStore) -> list[object]:
    for number in range(7):
        namespace = ("docs", "team-a" if number % 2 else "team-b")
        value = {"n": number, "kind": "even" if number % 2 == 0 else "odd"}
        await s.aput(namespace, f"doc-{number}", value | {"meta": {"w": number}})
    await s.aput(("other",), "x", {"n": 100, "kind": "odd"})
    await s.aput(("docs", "team-b"), "doc-0", {"n": 0, "kind": "changed"})
    return [
        await s.asearch(()),
        await s.asearch(("docs",)),
        await s.asearch(("docs", "team-a")),
        await s.asearch(("docs",), limit=2),
        await s.asearch(("docs",), limit=3, offset=2),
        await s.asearch(("docs",), offset=50),
        await s.asearch((), filter={"kind": "odd"}),
        await s.asearch((), filter={"kind": "odd"}, limit=1, offset=1),
        await s.asearch((), filter={"n": {"$gt": 2, "$lte": 5}}),
        await s.asearch((), filter={"n": {"$ne": 3}, "kind": "odd"}),
        await s.asearch((), filter={"meta": {"w": 4}}),
        await s.asearch(("nothing",)),
    ]


async def list_namespaces(s: BaseStore) -> list[object]:
    for namespace in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]:
        await s.aput(namespace, "k", {"v": 1})
    return [
        await s.alist_namespaces(),
        await s.alist_namespaces(prefix=("a", "b")),
        await s.alist_namespaces(prefix=("a", "*", "f")),
        await s.alist_namespaces(suffix=("f",)),
        await s.alist_namespaces(prefix=("a",), suffix=("f",)),
        await s.alist_namespaces(max_depth=2),
        await s.alist_namespaces(prefix=("a",), max_depth=3),
        await s.alist_namespaces(limit=3, offset=2),
        await s.alist_namespaces(prefix=("users",)),
        await s.alist_namespaces(suffix=("*", "f")),
        await s.alist_namespaces(prefix=("nope",)),
    ]


async def batches_read_before_they_write(s: BaseStore) -> list[object]:
    await s.aput(("b",), "k", {"v": 0})
    answers = await s.abatch(
        [
            PutOp(("b",), "k", {"v": 1}),
            GetOp(("b",), "k"),
            PutOp(("b",), "k", {"v": 2}),
            PutOp(("b",), "new", {"v": 3}),
            SearchOp(("b",), None, 10, 0),
            ListNamespacesOp(None, None, 100, 0),
            PutOp(("b",), "gone", None),
        ]
    )
    after = await s.abatch([GetOp(("b",), "k"), GetOp(("b",), "new")])
    return [answers, after]


async def sync_methods_from_a_thread(s: BaseStore) -> list[object]:
    def work() -> list[object]:
        s.put(("sync",), "k", {"v": 1})
        got = s.get(("sync",), "k")
        found = s.search(("sync",))
        s.delete(("sync",), "k")
        return [got, found, s.get(("sync",), "k")]

    return await asyncio.to_thread(work)


CASES: dict[str, Case] = {
    case.__name__: case
    for case in (
        put_get_delete,
        odd_namespaces_and_keys,
        values_round_trip,
        search_prefix_filter_paging,
        list_namespaces,
        batches_read_before_they_write,
        sync_methods_from_a_thread,
    )
}


@pytest.mark.parametrize("name", list(CASES))
async def test_the_store_answers_as_in_memory_store_does(
    name: str, store: WenchangStore
) -> None:
    expected = seen(await CASES[name](InMemoryStore()))

    assert seen(await CASES[name](store)) == expected


async def test_a_content_value_is_a_readable_memory(
    server: Server, token: str, store: WenchangStore
) -> None:
    value = {"content": "- [stated] Drinks green tea every morning.\n", "kind": "pref"}
    await store.aput(("memories", "alice"), "tea", value)

    async with AsyncMemoryClient(server.url, token) as client:
        listing = await client.list_prefix("user", "langgraph")
        file = await client.read_file("user", "langgraph", listing.entries[0].name)
        found = await client.search_memory("green tea", scope="user")

    assert file.content == value["content"]
    assert [hit.name for hit in found.hits] == [file.name]
    queried = await store.asearch(("memories",), query="green tea")
    assert [(item.key, item.value) for item in queried] == [("tea", value)]
    assert queried[0].score is not None


async def test_items_keep_their_creation_time_across_updates(
    store: WenchangStore,
) -> None:
    await store.aput(("t",), "k", {"v": 1})
    first = await store.aget(("t",), "k")
    await store.aput(("t",), "k", {"v": 2})
    second = await store.aget(("t",), "k")

    assert first is not None and second is not None
    assert second.created_at == first.created_at
    assert second.updated_at >= first.updated_at


async def test_concurrent_upserts_of_one_item_all_land(store: WenchangStore) -> None:
    """Writers racing on one key: each put lands (last writer wins), none fails."""
    await asyncio.gather(*(store.aput(("race",), "k", {"v": n}) for n in range(6)))

    item = await store.aget(("race",), "k")

    assert item is not None and item.value["v"] in range(6)
