"""One thread that alone owns one ``sqlite3`` connection and runs functions of it.

The storage's write connection lives here (``sqlite_group_commit``): a
function submitted from the event loop runs on the thread in submission
order, and its result or exception comes back to the loop as a future. A
plain thread and queue, not an executor: each hop is one queue put and one
``call_soon_threadsafe`` (an executor's futures cost twice as much per hop).
A cancelled waiter does not unqueue its function: it still runs, so a batch
of writes whose first writer went away still answers the others.
"""

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

type _Item = tuple[Callable[[], object], asyncio.Future[Any], asyncio.AbstractEventLoop]


class WriteThread:
    """Runs functions on one thread of its own, in order (``submit``)."""

    def __init__(self, name: str) -> None:
        self._queue: SimpleQueue[_Item | None] = SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def submit[T](self, function: Callable[[], T]) -> asyncio.Future[T]:
        """``function()`` queued for the thread; its result as a future."""
        if self._closed:
            raise sqlite3.ProgrammingError("the write thread is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queue.put((function, future, loop))
        return future

    async def close(self) -> None:
        """Run what is queued, then end the thread."""
        self._closed = True
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)

    def _serve(self) -> None:
        while (item := self._queue.get()) is not None:
            function, future, loop = item
            try:
                result, error = function(), None
            except BaseException as exc:  # handed to the waiter, which raises it
                result, error = None, exc
            # RuntimeError: the loop closed meanwhile, and nobody waits.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, future, result, error)


def _settle(
    future: asyncio.Future[Any], result: object, error: BaseException | None
) -> None:
    if future.done():  # its waiter was cancelled
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
