"""``at_once``: calls answered at once, calls that wait, and calls that fail."""

import asyncio
import gc

import pytest

from app.features.memory.ports.index_reads import at_once


async def answer(value: int) -> int:
    return value


async def waited(value: int) -> int:
    await asyncio.sleep(0)  # an answer from elsewhere (Redis, GCS)
    return value


async def fail(value: int) -> int:
    raise ValueError(value)


async def test_calls_answered_at_once_and_calls_that_wait_keep_their_order() -> None:
    assert await at_once([answer(1), answer(2)]) == [1, 2]
    assert await at_once([waited(1), answer(2), waited(3)]) == [1, 2, 3]


async def test_calls_answered_at_once_take_no_trip_through_the_event_loop() -> None:
    """Each call starts at once: when all are answered, nothing waits for the loop."""
    ran: list[str] = []
    asyncio.get_running_loop().call_soon(ran.append, "the loop's next turn")

    assert await at_once([answer(1), answer(2)]) == [1, 2]
    assert ran == []


async def test_a_failed_call_among_several_leaves_no_failure_unretrieved(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first failure is raised; the other's is retrieved, so asyncio never
    logs "Task exception was never retrieved" for it."""
    gc.collect()  # what earlier tests left is logged before this test looks
    caplog.clear()
    raised: tuple[object, ...] = ()
    try:
        await at_once([answer(0), fail(1), fail(2)])
    except ValueError as error:
        raised = error.args
    gc.collect()

    assert raised == (1,)
    assert "never retrieved" not in caplog.text
