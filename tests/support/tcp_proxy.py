"""A loopback TCP proxy on the test's own event loop that can drop its connections.

``cut()`` closes every open connection and, until the block ends, closes each
new one as soon as it is accepted: what a client sees of a server it can no
longer reach, while clients connected directly still reach it (a partition).
"""

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager, contextmanager

from tests.support.loopback import LOOPBACK

CHUNK = 65536


class TcpProxy:
    def __init__(self, upstream: int) -> None:
        self._upstream = upstream
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.cut_off = False
        self.dropped = 0
        """Connections closed by a cut, open ones and refused new ones alike."""

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, LOOPBACK, 0)

    async def close(self) -> None:
        self._drop_all()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    @contextmanager
    def cut(self) -> Generator[None]:
        """No connection through the proxy for the block."""
        self.cut_off = True
        self._drop_all()
        try:
            yield
        finally:
            self.cut_off = False

    def _drop_all(self) -> None:
        for writer in list(self._writers):
            self.dropped += 1
            writer.close()
        self._writers.clear()

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if self.cut_off:
            self.dropped += 1
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(
                LOOPBACK, self._upstream
            )
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        await asyncio.gather(
            self._pipe(reader, up_writer), self._pipe(up_reader, writer)
        )

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(CHUNK):
                writer.write(data)
                await writer.drain()
        self._writers.discard(writer)
        writer.close()


@asynccontextmanager
async def tcp_proxy(upstream: int) -> AsyncGenerator[TcpProxy]:
    proxy = TcpProxy(upstream)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()
