"""LangGraph's long-term memory kept in Wenchang: ``WenchangStore``.

An ``AsyncBatchedBaseStore`` (the sync methods work from other threads, as
LangGraph's batching allows): every item is a file of one area of ``scope``
(``wenchang_client.store_codec`` says how), every write is version-guarded and
an upsert retried on the version that won. A batch answers its reads before it
applies its writes, the last write of one item winning, as ``InMemoryStore``
does; ``search`` and ``list_namespaces`` order as it does too (namespaces and
keys in the order they were first written). ``query`` uses Wenchang's search.
Needs the ``langgraph`` extra.
"""

import asyncio
import itertools
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import httpx
from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.batch import AsyncBatchedBaseStore

from wenchang_client.async_client import AsyncMemoryClient
from wenchang_client.errors import NotFoundError, VersionConflictError
from wenchang_client.models import FileEntry, MemoryFile
from wenchang_client.retries import RetryPolicy
from wenchang_client.store_codec import (
    Stored,
    decode,
    encode,
    file_name,
    meta_of,
    moment,
)
from wenchang_client.store_filters import does_match, matches

__all__ = ["WenchangStore"]

UPSERT_ATTEMPTS = 8
_sequence = itertools.count()


def _created_now() -> str:
    """A creation stamp that orders the items one process writes, ties included."""
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    return f"{now.replace('+00:00', 'Z')}#{next(_sequence):012d}"


class WenchangStore(AsyncBatchedBaseStore):
    """LangGraph's ``BaseStore`` on ``scope`` of the Wenchang at ``base_url``.

    Items live in area ``area`` (default ``langgraph``). Construct it inside a
    running event loop.
    """

    supports_ttl = False

    def __init__(
        self,
        base_url: str,
        token: str,
        scope: str,
        *,
        area: str = "langgraph",
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__()
        self.scope = scope
        self.area = area
        self.client = AsyncMemoryClient(
            base_url, token, retry=retry, transport=transport
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op))
            else:
                results.append(None)  # a put: applied after every read
        puts = {(op.namespace, op.key): op for op in ops if isinstance(op, PutOp)}
        for op in puts.values():
            await self._put(op)
        return results

    # Reads

    async def _file(self, name: str) -> MemoryFile | None:
        try:
            return await self.client.read_file(self.scope, self.area, name)
        except NotFoundError:
            return None

    def _item(self, stored: Stored, file: MemoryFile) -> Item:
        return Item(
            value=stored.value,
            key=stored.key,
            namespace=stored.namespace,
            created_at=moment(stored.created_at.split("#")[0]),
            updated_at=moment(file.last_updated),
        )

    async def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        file = await self._file(file_name(namespace, key))
        meta = meta_of(file.description) if file else None
        if file is None or meta is None:
            return None
        return self._item(decode(meta, file.content), file)

    async def _entries(self) -> list[tuple[dict[str, Any], FileEntry]]:
        """Every item's file of the area, with its description's fields."""
        found: list[tuple[dict[str, Any], FileEntry]] = []
        cursor: str | None = None
        while True:
            try:
                page = await self.client.list_prefix(self.scope, self.area, cursor)
            except NotFoundError:
                return found
            for entry in page.entries:
                meta = meta_of(entry.description)
                if meta is not None:
                    found.append((meta, entry))
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    async def _ordered(self) -> list[tuple[dict[str, Any], FileEntry]]:
        """Items as InMemoryStore keeps them: namespaces in the order their
        first item was written, then keys in the order they were written."""
        entries = await self._entries()
        first: dict[tuple[str, ...], str] = {}
        for meta, _ in entries:
            namespace = tuple(meta["namespace"])
            first[namespace] = min(first.get(namespace, meta["at"]), meta["at"])
        return sorted(
            entries,
            key=lambda pair: (first[tuple(pair[0]["namespace"])], pair[0]["at"]),
        )

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = op.namespace_prefix
        if op.query:
            candidates = await self._by_query(op.query)
        else:
            candidates = [(meta, entry, None) for meta, entry in await self._ordered()]
        matched: list[SearchItem] = []
        wanted = op.offset + op.limit
        for meta, entry, score in candidates:
            if tuple(meta["namespace"])[: len(prefix)] != prefix:
                continue
            if len(matched) >= wanted and not op.filter:
                break
            file = await self._file(entry.name)
            if file is None:
                continue  # deleted since it was listed
            stored = decode(meta, file.content)
            if op.filter and not matches(stored.value, op.filter):
                continue
            item = self._item(stored, file)
            matched.append(
                SearchItem(
                    namespace=item.namespace,
                    key=item.key,
                    value=item.value,
                    created_at=item.created_at,
                    updated_at=item.updated_at,
                    score=score,
                )
            )
        return matched[op.offset : op.offset + op.limit]

    async def _by_query(
        self, query: str
    ) -> list[tuple[dict[str, Any], FileEntry, float | None]]:
        found: list[tuple[dict[str, Any], FileEntry, float | None]] = []
        cursor: str | None = None
        while True:
            page = await self.client.search_memory(
                query, scope=self.scope, area=self.area, limit=50, cursor=cursor
            )
            for hit in page.hits:
                meta = meta_of(hit.description)
                if meta is not None:
                    entry = FileEntry.model_validate(hit.model_dump() | {"sources": []})
                    found.append((meta, entry, hit.score))
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = {tuple(meta["namespace"]) for meta, _ in await self._entries()}
        chosen = [
            namespace
            for namespace in namespaces
            if all(does_match(c, namespace) for c in op.match_conditions or ())
        ]
        if op.max_depth is not None:
            chosen = list({namespace[: op.max_depth] for namespace in chosen})
        return sorted(chosen)[op.offset : op.offset + op.limit]

    # Writes

    async def _put(self, op: PutOp) -> None:
        name = file_name(op.namespace, op.key)
        for _ in range(UPSERT_ATTEMPTS):
            current = await self._file(name)
            try:
                if op.value is None:
                    if current is not None:
                        await self.client.delete_file(
                            self.scope,
                            self.area,
                            name,
                            expected_version=current.version,
                        )
                    return
                meta = meta_of(current.description) if current else None
                created = meta["at"] if meta else _created_now()
                content, description = encode(
                    op.namespace, op.key, dict(op.value), created
                )
                await self.client.write_file(
                    self.scope,
                    self.area,
                    name,
                    content=content,
                    description=description,
                    aliases=[],
                    expected_version=current.version if current else None,
                )
                return
            except (VersionConflictError, NotFoundError):
                await asyncio.sleep(0)  # another writer won: apply to what it left
        raise VersionConflictError(
            f"The item {op.key!r} kept changing while it was written "
            f"({UPSERT_ATTEMPTS} attempts); retry.",
            {"content": "", "version": ""},
        )
