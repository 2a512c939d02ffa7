"""Search end to end over HTTP at c=1: SQLite postings, and GCS (emulator) warm.

The corpus and queries are ``bench.search``'s (synthetic Zipf text, 1-3 topical
words, the last often cut short). Each server is warmed by one search before it
is measured: SQLite brings rows written directly into its postings on the first
search of a prefix; GCS builds the caller's corpus once and keeps it in the
memory cache (TTL raised so it stays warm for the run).
"""

import asyncio
import random
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from app.features.memory.domain import file_key
from app.features.memory.ports import FileMetadata, Write
from app.infra.sqlite.storage import open_sqlite_storage
from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from bench import gcs, search
from bench.seed import BASE_TIME, Tokens
from bench.servers import Server
from bench.suite import Bench, Results, running, sqlite_url

ENTITY = "search"
QUERIES = 200
WARM_TIMEOUT_SECONDS = 600


def _warm(server: Server, token: str, query: str) -> None:
    request = urllib.request.Request(
        f"{server.url}/v1/search?q={quote(query)}",
        headers={"Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=WARM_TIMEOUT_SECONDS) as answer:
        answer.read()


async def _create_schema(path: Path) -> None:
    async with open_sqlite_storage(str(path)):
        pass


async def _put_all(storage_url: str, found: list[search.Document]) -> None:
    from app.infra.port_wiring import open_storage

    gate = asyncio.Semaphore(gcs.SEED_CONCURRENCY)
    metadata = [
        FileMetadata(doc.description, tuple(doc.aliases), ("http",), BASE_TIME)
        for doc in found
    ]
    async with open_storage(storage_url) as storage:

        async def put(doc: search.Document, meta: FileMetadata) -> None:
            async with gate:
                key = file_key("user", ENTITY, doc.area, doc.name)
                await storage.put(Write(key, doc.content, meta))

        await asyncio.gather(*(put(d, m) for d, m in zip(found, metadata, strict=True)))


def search_rows(
    bench: Bench, results: Results, progress: Callable[[str], None]
) -> None:
    profile = bench.profile
    rng = random.Random(14)
    words = search.vocabulary(rng)
    rng.shuffle(words)
    found = search.documents(
        max(profile.search_files, profile.gcs_search_files), words, rng
    )
    asked = search.queries(words, rng, QUERIES)
    tokens_path = bench.workdir / "search-tokens.json"
    tokens_path.unlink(missing_ok=True)
    token, _ = create_token(tokens_path, {"user": Grant(ENTITY, "owner")})
    tokens = Tokens(reader=token, writer=token, sized={})

    def measure(label: str, files: int, start: Callable[[], Server]) -> None:
        with running(start) as (server,):
            _warm(server, token, asked[0])
            run = bench.measure(
                server,
                "search_memory",
                1,
                tokens,
                duration=2 * profile.duration,
                extra={"queries": asked},
            )
        results.search.append((label, files, run))
        progress(f"search, {label}")

    database = bench.workdir / "search.db"
    asyncio.run(_create_schema(database))
    search.seed(database, found[: profile.search_files], ENTITY)
    measure(
        "SQLite (postings)",
        profile.search_files,
        lambda: bench.wenchang(
            "search-sqlite",
            sqlite_url(database),
            WENCHANG_TOKENS_FILE=str(tokens_path),
        ),
    )
    if not profile.gcs_search_files:
        return
    with gcs.emulator(bench.workdir) as emulator:
        if emulator is None:
            results.notes.append("GCS search row skipped: no fake-gcs-server.")
            return
        gcs.point_at(emulator)
        url = f"{emulator.storage_url}-search"
        asyncio.run(_put_all(url, found[: profile.gcs_search_files]))
        measure(
            "GCS emulator, corpus cached (memory)",
            profile.gcs_search_files,
            lambda: bench.wenchang(
                "search-gcs",
                url,
                WENCHANG_TOKENS_FILE=str(tokens_path),
                WENCHANG_INDEX_CACHE="memory",
                WENCHANG_INDEX_CACHE_TTL="3600",
                STORAGE_EMULATOR_HOST=emulator.url,
            ),
        )
