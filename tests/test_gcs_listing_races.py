"""GCS listings: one request a page, and a listing that meets a rename.

A rename writes its destination marked, then commits on the source. Here the
destination's key sorts before the source's, so a listing meets the mark
first, and which of the two keys it shows must agree with the source the same
listing shows later: exactly one of them. The writer's trace hook stops the
rename just before its commit; the reader's hook holds the listing once its
snapshot is taken, so each interleaving is the same every run.
"""

import asyncio
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest

from app.features.memory.ports import Write
from app.infra.gcs.client import GcsClient
from app.infra.gcs.location import parse_gcs_url
from app.infra.gcs.storage import GcsStorage
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator
from tests.support.storage_history_conformance import META, change

LATER, EARLIER = "user/alice/projects/chai.md", "user/alice/notes/tea.md"
ORDERS = pytest.mark.parametrize(
    ("source", "destination"),
    [(LATER, EARLIER), (EARLIER, LATER)],
    ids=["destination-first", "source-first"],
)
ENTITY = "user/alice/"
WAIT = 30.0

type Hook = Callable[[str, str], Awaitable[None]]


@dataclass
class Traced:
    """Runs ``hook`` (method, URL) before each request of one session."""

    hook: Hook | None = None
    """Run before each request."""
    ended: Hook | None = None
    """Run once each answer's headers are in (its body is already written)."""
    urls: list[str] = field(default_factory=list[str])

    async def before(
        self,
        session: aiohttp.ClientSession,
        context: SimpleNamespace,
        params: aiohttp.TraceRequestStartParams,
    ) -> None:
        self.urls.append(str(params.url))
        if self.hook is not None:
            await self.hook(params.method, str(params.url))

    async def after(
        self,
        session: aiohttp.ClientSession,
        context: SimpleNamespace,
        params: aiohttp.TraceRequestEndParams,
    ) -> None:
        if self.ended is not None:
            await self.ended(params.method, str(params.url))


@dataclass
class Pair:
    writer: GcsStorage
    reader: GcsStorage
    """Another replica; every mark is young for it."""
    writing: Traced
    reading: Traced
    prefix: str


@pytest.fixture
async def pair(gcs_emulator: GcsEmulator) -> AsyncGenerator[Pair]:
    url = f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}?timeout=30&attempts=1"
    location = parse_gcs_url(url)
    writing, reading = Traced(), Traced()
    sessions: list[aiohttp.ClientSession] = []
    for traced in (writing, reading):
        trace = aiohttp.TraceConfig()
        trace.on_request_start.append(traced.before)
        trace.on_request_end.append(traced.after)
        sessions.append(aiohttp.ClientSession(trace_configs=[trace]))
    try:
        writer, reader = (
            GcsStorage(GcsClient(session=s), location, pending_seconds=3600)
            for s in sessions
        )
        yield Pair(writer, reader, writing, reading, location.prefix)
    finally:
        for session in sessions:
            await session.close()


def replaces(method: str, url: str, generation: str) -> bool:
    """Whether the request is an upload guarded by ``generation`` (the
    multipart body names the object; only the commit replaces the source)."""
    query = parse_qs(urlsplit(url).query)
    guarded = query.get("ifGenerationMatch") == [generation]
    return method == "POST" and "/upload/" in url and guarded


def lists(method: str, url: str) -> bool:
    """A listing request (of a prefix's objects)."""
    return method == "GET" and urlsplit(url).path.endswith("/o")


async def keys(reader: GcsStorage) -> list[str]:
    page = await reader.list_page(ENTITY, start_after=None, limit=10)
    return [item.key for item in page]


async def renamed_while(
    pair: Pair, source: str, destination: str, during: Callable[[], Awaitable[None]]
) -> str:
    """Rename ``source`` to ``destination``, running ``during`` just before
    its commit (the upload guarded by the source's generation)."""
    created = await pair.writer.put_if_version(
        Write(source, b"one\n", META, change=change("write_file")), None
    )
    assert created is not None
    ran: list[bool] = []

    async def before_commit(method: str, url: str) -> None:
        if not ran and replaces(method, url, created):
            ran.append(True)
            await during()

    pair.writing.hook = before_commit
    moved = await pair.writer.rename_if_version(
        source, destination, created, replacing=None, change=change("rename_file")
    )
    pair.writing.hook = None
    assert ran == [True], "the commit was never sent"
    assert moved is not None
    return moved


@ORDERS
async def test_a_listing_before_the_commit_shows_the_source_only(
    pair: Pair, source: str, destination: str
) -> None:
    seen: list[list[str]] = []

    async def listing() -> None:
        seen.append(await keys(pair.reader))

    await renamed_while(pair, source, destination, listing)

    assert seen == [[source]]
    assert await keys(pair.reader) == [destination]


@pytest.mark.parametrize(
    ("source", "destination", "shown"),
    [(LATER, EARLIER, EARLIER), (EARLIER, LATER, EARLIER)],
    ids=["destination-first", "source-first"],
)
async def test_a_listing_taken_before_the_commit_and_read_after_it_shows_one_key(
    pair: Pair, source: str, destination: str, shown: str
) -> None:
    """The listing's snapshot holds the mark and the live source; the rename
    finishes before the listing reads on. Whichever of the two it meets first
    decides: the mark settles as the finished destination (the source listed
    after it must not show), or the source shows (the mark after it must not)."""
    listed = asyncio.Event()
    renamed = asyncio.Event()

    async def after_the_snapshot(method: str, url: str) -> None:
        if not listed.is_set() and lists(method, url):
            listed.set()
            await asyncio.wait_for(renamed.wait(), WAIT)

    pair.reading.ended = after_the_snapshot
    task: list[asyncio.Task[list[str]]] = []

    async def start_listing() -> None:
        task.append(asyncio.create_task(keys(pair.reader)))
        await asyncio.wait_for(listed.wait(), WAIT)

    moved = await renamed_while(pair, source, destination, start_listing)
    renamed.set()
    page = await asyncio.wait_for(task[0], WAIT)

    assert page == [shown]
    there = await pair.reader.get(destination)
    assert there is not None and there.version == moved
    assert await pair.reader.get(source) is None


async def test_a_page_of_files_costs_one_listing_request(pair: Pair) -> None:
    """A page asks for one item more than its limit, from its start, so
    nothing hidden, it comes in one listing request (a smaller page, or one
    listed from the prefix's first key, would take several)."""
    for name in ("a", "b", "c"):
        write = Write(f"{ENTITY}{name}.md", b"x\n", META, change=change("write_file"))
        assert await pair.writer.put_if_version(write, None) is not None
    pair.reading.urls.clear()

    page = await pair.reader.list_page(ENTITY, start_after=None, limit=2)

    assert [item.key for item in page] == [f"{ENTITY}a.md", f"{ENTITY}b.md"]
    assert len(pair.reading.urls) == 1
    pair.reading.urls.clear()

    after = await pair.reader.list_page(ENTITY, start_after=f"{ENTITY}b.md", limit=1)

    assert [item.key for item in after] == [f"{ENTITY}c.md"]
    assert len(pair.reading.urls) == 1
