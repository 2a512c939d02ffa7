"""The SQLite write thread outlives the event loops that gave it work.

A function submitted from a loop that closed before it ran (a test's loop, a
worker shutting down) still runs; its answer has nowhere to go and is dropped,
and the thread goes on serving the next loop instead of dying with it.
"""

import asyncio
import threading

from app.infra.sqlite.write_thread import WriteThread


def test_a_loop_that_closed_before_its_answer_leaves_the_thread_serving() -> None:
    gate = threading.Event()
    ran: list[str] = []

    def first() -> str:
        gate.wait(timeout=60)
        ran.append("first")
        return "first"

    async def submit_and_leave() -> WriteThread:
        thread = WriteThread("wenchang-test-writes")
        thread.submit(first)  # nobody will wait for this answer
        return thread

    gone = asyncio.new_event_loop()
    thread = gone.run_until_complete(submit_and_leave())
    gone.close()
    gate.set()  # ``first`` ends now; its loop is already closed

    async def next_answer() -> str:
        try:
            return await asyncio.wait_for(thread.submit(lambda: "second"), 10)
        finally:
            await thread.close()

    assert asyncio.run(next_answer()) == "second"
    assert ran == ["first"]
