"""What a serving process has built by the time it starts is kept out of the
garbage collector's full passes.

A full collection walks every tracked object, and after start-up most of them
(modules, schemas, the app, its connections) live as long as the process. Left
in the heap they are walked again by every full pass that requests trigger,
and a 500-entry index allocates thousands of objects, so concurrent indexes
trigger many. ``gc.freeze`` moves them to a permanent generation once, after
start-up, so a collection walks only what requests made. Only the serving entry
points ask for it: a process that builds many apps (the tests) would keep each
one forever.
"""

import gc
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager


def freeze_startup_heap() -> None:
    """Collect what start-up left behind, then exempt the survivors."""
    gc.collect()
    gc.freeze()


def frozen_after_start[T](
    lifespan: Callable[[], AbstractAsyncContextManager[T]],
) -> Callable[[], AbstractAsyncContextManager[T]]:
    """``lifespan``, freezing the heap once it has started."""

    @asynccontextmanager
    async def run() -> AsyncGenerator[T]:
        async with lifespan() as value:
            freeze_startup_heap()
            yield value

    return run
