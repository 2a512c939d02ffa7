"""Redis index cache: entity listings shared by every replica, guarded by stamps.

A listing is served only while both its Redis stamp and the entity's change
marker in the backend are the ones it was read under. Redis drops the stamp on
every write; when Redis cannot be reached the write moves the marker instead
(on SQLite the write's own statement already moved it), so the landed write
still answers its result and no replica serves the listing it missed.
"""

import asyncio
import json
import logging
import secrets
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import cast
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from redis.asyncio import Redis
from tenchi.errors import AppError

from app.features.memory.ports import CachedCorpus, CachedListing, ListedObject
from app.features.search.domain.corpus import Corpus, SearchDocument
from app.infra.change_markers import ChangeMarkers, ProcessChangeMarkers
from app.infra.object_metadata import (
    listed_object,
    metadata_from_map,
    metadata_to_map,
)
from app.infra.redis.connection import RedisScriptStore, open_redis_client
from app.shared.errors import backend_unavailable

KEY_PREFIX = "wenchang:index:"
MAX_CORPORA = 256
"""Decoded corpora this process keeps (oldest use goes first)."""
STAMP_TTL_SECONDS = 86_400
RETRIES = 2
SEPARATOR = "/"
"""Between the Redis stamp (hex) and the backend's marker in a stamp we hand out."""

logger = logging.getLogger(__name__)

# A prefix's stamp is created on first read and replaced by every invalidation;
# a listing is stored tagged with the stamp its reader saw, and only while that
# stamp is still current, so a listing read before an invalidation is never
# stored after it (nor served, should its stamp key have expired meanwhile).
_CURRENT_STAMP = """
local stamp = redis.call('GET', KEYS[1])
if not stamp then
  stamp = ARGV[1]
  redis.call('SET', KEYS[1], stamp, 'EX', ARGV[2])
end
"""
"""Lua prelude: ``stamp``, the prefix's current stamp (ARGV[1] minted if none)."""
_READ = _CURRENT_STAMP + "return {stamp, redis.call('GET', KEYS[2])}\n"
# ARGV[4], the tag stored with the body, is the stamp ARGV[1] with its marker.
_STORE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[2], ARGV[4] .. '\\n' .. ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
"""
# A corpus is read only when this process's copy was built at another stamp:
# '=' answers "yours is current" without sending the corpus again.
_READ_CORPUS = (
    _CURRENT_STAMP
    + """
if stamp == ARGV[3] and redis.call('EXISTS', KEYS[2]) == 1 then
  return {stamp, '='}
end
return {stamp, redis.call('GET', KEYS[2])}
"""
)
# Dropping the stamp (not replacing it) refuses a racing store just the same,
# since the next read mints a fresh random stamp, and leaves no key naming the
# prefix behind, so a purged entity leaves no trace in Redis.
_INVALIDATE = """
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
"""


def _encode_corpus(corpus: Corpus) -> str:
    return json.dumps(
        [
            [d.key, d.version, metadata_to_map(d.metadata), d.content]
            for d in corpus.documents
        ],
        ensure_ascii=False,
    )


def _decode_corpus(text: str) -> Corpus:
    rows: list[tuple[str, str, dict[str, str], str]] = json.loads(text)
    return Corpus(
        [
            SearchDocument(key, version, metadata_from_map(metadata), content)
            for key, version, metadata, content in rows
        ]
    )


def _encode(listing: Sequence[ListedObject]) -> str:
    return json.dumps(
        [[item.key, item.version, metadata_to_map(item.metadata)] for item in listing]
    )


def _decode(text: str) -> tuple[ListedObject, ...]:
    rows: list[tuple[str, str, dict[str, str]]] = json.loads(text)
    return tuple(
        listed_object(key, metadata_from_map(metadata), version)
        for key, version, metadata in rows
    )


class RedisIndexCache(RedisScriptStore):
    """The IndexCache port over one Redis database; each method is one script."""

    def __init__(
        self,
        client: Redis,
        *,
        ttl: float,
        key_prefix: str = KEY_PREFIX,
        markers: ChangeMarkers | None = None,
    ) -> None:
        super().__init__(client)
        self._ttl_ms = max(1, round(ttl * 1000))
        self._key_prefix = key_prefix
        self._markers = markers or ProcessChangeMarkers()
        self._corpora: dict[str, tuple[str, Corpus]] = {}
        """This process's decoded copy of each corpus, with the stamp it is valid at."""

    def _keys(self, prefix: str) -> list[str]:
        return [f"{self._key_prefix}stamp:{prefix}", f"{self._key_prefix}list:{prefix}"]

    def _corpus_keys(self, prefix: str) -> list[str]:
        return [self._keys(prefix)[0], f"{self._key_prefix}search:{prefix}"]

    async def _read(
        self, prefix: str, script: str, keys: list[str], local: str = ""
    ) -> tuple[str, str | None]:
        """The stamp to hand out (Redis's, then the marker) and what was stored."""
        args = [secrets.token_hex(16), str(STAMP_TTL_SECONDS), local]
        # The marker is read before storage is listed, like the Redis stamp.
        reply, marker = await asyncio.gather(
            self._run(script, keys, args), self._markers.read(prefix)
        )
        stamp, stored = cast(list[str | None], reply)
        assert stamp is not None
        return f"{stamp}{SEPARATOR}{marker}", stored

    async def get(self, prefix: str) -> CachedListing:
        stamp, stored = await self._read(prefix, _READ, self._keys(prefix))
        if stored is not None:
            tag, _, body = stored.partition("\n")
            if tag == stamp:
                return CachedListing(listing=_decode(body), stamp=stamp)
        return CachedListing(listing=None, stamp=stamp)

    async def set(
        self, prefix: str, listing: Sequence[ListedObject], *, stamp: str
    ) -> None:
        await self._store(self._keys(prefix), stamp, _encode(listing))

    async def _store(self, keys: list[str], stamp: str, body: str) -> bool:
        """Store ``body`` tagged ``stamp`` while its Redis part is current."""
        redis_stamp = stamp.partition(SEPARATOR)[0]
        args = [redis_stamp, body, str(self._ttl_ms), stamp]
        return await self._run(_STORE, keys, args) == 1

    async def get_corpus(self, prefix: str) -> CachedCorpus:
        local = self._corpora.get(prefix)
        mine = local[0].partition(SEPARATOR)[0] if local else ""
        keys = self._corpus_keys(prefix)
        stamp, stored = await self._read(prefix, _READ_CORPUS, keys, mine)
        if stored == "=" and local is not None and local[0] == stamp:
            return CachedCorpus(corpus=local[1], stamp=stamp)
        self._corpora.pop(prefix, None)
        if stored is not None and stored != "=":
            tag, _, body = stored.partition("\n")
            if tag == stamp:
                corpus = _decode_corpus(body)
                self._remember(prefix, stamp, corpus)
                return CachedCorpus(corpus=corpus, stamp=stamp)
        return CachedCorpus(corpus=None, stamp=stamp)

    async def set_corpus(self, prefix: str, corpus: Corpus, *, stamp: str) -> None:
        keys = self._corpus_keys(prefix)
        if await self._store(keys, stamp, _encode_corpus(corpus)):
            self._remember(prefix, stamp, corpus)

    def _remember(self, prefix: str, stamp: str, corpus: Corpus) -> None:
        self._corpora.pop(prefix, None)
        self._corpora[prefix] = (stamp, corpus)
        while len(self._corpora) > MAX_CORPORA:
            del self._corpora[next(iter(self._corpora))]

    async def invalidate(self, prefix: str, *, after_write: bool = False) -> None:
        self._corpora.pop(prefix, None)
        keys = [*self._keys(prefix), self._corpus_keys(prefix)[1]]
        try:
            await self._run(_INVALIDATE, keys, [])
        except AppError as exc:
            if exc.definition is not backend_unavailable:
                raise
            # The write before us has landed: its answer must not be lost. The
            # moved marker refuses every listing Redis still holds, on every
            # replica; only when the backend cannot take it either is this a 503.
            logger.warning(
                "Redis unreachable: an index invalidated by its change marker"
            )
            if not (after_write and self._markers.moved_by_writes):
                await self._markers.bump(prefix)


def _split_url(url: str) -> tuple[str, str]:
    """The Redis URL without our ``key_prefix`` option, and that option."""
    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    key_prefix = query.pop("key_prefix", [KEY_PREFIX])[-1]
    rest = urlencode(query, doseq=True)
    scheme, netloc, path, _, fragment = parts
    return urlunsplit((scheme, netloc, path, rest, fragment)), key_prefix


@asynccontextmanager
async def open_redis_index_cache(
    url: str, *, ttl: float, markers: ChangeMarkers | None = None
) -> AsyncGenerator[RedisIndexCache]:
    """A cache on the Redis at ``url`` (``redis://host:port/db[?key_prefix=p]``).

    Connecting is lazy, so a Redis that is down at startup does not stop the
    server; reads fail with BackendUnavailable until it answers. ``markers``
    are the backend's change markers (every process on the backend shares them).
    """
    redis_url, key_prefix = _split_url(url)
    async with open_redis_client(
        redis_url, decode_responses=True, retries=RETRIES
    ) as client:
        yield RedisIndexCache(client, ttl=ttl, key_prefix=key_prefix, markers=markers)
