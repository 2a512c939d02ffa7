"""A loopback HTTP server standing in for GCS's answers to one request.

The request layer (``app/infra/gcs/requests.py``) meets real HTTP answers:
each attempt gets the status a test scripts, so its retry rules are tested
without the emulator. ``answering()`` serves ``/o`` (``Answers.handle``) and
``/list`` (``Answers.listing``) and yields the answers and the base URL.
"""

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from aiohttp import web

from tests.support.loopback import LOOPBACK


class Answers:
    """A server that answers with ``first`` statuses in turn, then ``status``,
    each after ``delay`` seconds, and keeps the query of every request."""

    def __init__(self) -> None:
        self.first: list[int] = []
        self.status = 200
        self.delay = 0.0
        self.queries: list[dict[str, str]] = []

    @property
    def seen(self) -> int:
        return len(self.queries)

    async def handle(self, request: web.Request) -> web.Response:
        self.queries.append(dict(request.query))
        status = self.first.pop(0) if self.first else self.status
        if self.delay:
            await asyncio.sleep(self.delay)
        return web.json_response({"name": "x"}, status=status)

    async def listing(self, request: web.Request) -> web.Response:
        """Two pages: ``a`` then, for the token ``t1``, ``b``."""
        self.queries.append(dict(request.query))
        if request.query.get("pageToken") == "t1":
            return web.json_response({"items": [{"name": "b"}]})
        return web.json_response({"items": [{"name": "a"}], "nextPageToken": "t1"})


@asynccontextmanager
async def answering() -> AsyncGenerator[tuple[Answers, str]]:
    """The server on a free loopback port, stopped on exit."""
    answers = Answers()
    app = web.Application()
    app.router.add_get("/o", answers.handle)
    app.router.add_get("/list", answers.listing)
    runner = web.AppRunner(app, shutdown_timeout=5.0)
    await runner.setup()
    site = web.TCPSite(runner, LOOPBACK, 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield answers, f"http://{LOOPBACK}:{port}"
    finally:
        await runner.cleanup()
