"""Group commit: the writes that queue while one batch commits share the next one.

The storage's writes run on ONE ``sqlite3`` connection that lives on ONE
worker thread of its own (``open_group_commit``); nothing else uses it. A
write joins the queue; the first write of an empty queue schedules a batch on
that thread, and every write that arrives before that batch starts joins it.
No timer: a batch grows only while the thread is busy (committing the previous
batch). Every write is a job: a plain function of the batch's cursor that runs its
statements (``sqlite_writes``) and returns its row count. A batch is ONE
``BEGIN IMMEDIATE`` … ``COMMIT`` on the thread, each write of a larger batch
inside its own savepoint: a write whose job fails is rolled back alone and
gets its own error, the others land. A write learns its outcome only once its
batch's ``COMMIT`` returned; if the transaction cannot commit (or an error
ends it early, as ``SQLITE_FULL`` does), it is rolled back and every write of
the batch fails with that error. ``BEGIN IMMEDIATE`` first: a job's read sees
the last commit of every process, which a deferred transaction upgraded to a
write could not promise. ``call`` runs anything else on the connection
(``scrub``, a pragma) between batches, outside any transaction.
"""

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import AsyncGenerator, Callable, Sequence

from app.infra.sqlite.connection import Synchronous, pragmas, translate_sqlite_error
from app.infra.sqlite.write_thread import WriteThread

type Outcome = int | BaseException
"""A write's row count (did its compare-and-swap land), or what refused it."""
type Job = Callable[[sqlite3.Cursor], int]
"""Reads and writes on the connection inside a write's transaction; its row count.

A job runs every statement on the one cursor it is given (the batch's): none
is made and dropped per statement."""


class _Write:
    __slots__ = ("future", "job")

    def __init__(self, job: Job) -> None:
        self.job = job
        self.future: asyncio.Future[Outcome] | None = None
        """None for the write whose job runs the batch: the job's result is its own."""


class GroupCommit:
    """The writes of one ``sqlite3`` connection on its own thread, in batches."""

    def __init__(self, connection: sqlite3.Connection, thread: WriteThread) -> None:
        self._db, self._thread = connection, thread
        self.transactions = 0
        """Transactions run for writes so far (one per batch; tests and bench)."""
        self._queue: list[_Write] = []
        self._scheduled = False
        """A batch job waits on the thread and will take the queue when it starts."""
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        """Writes queued for the next batch (tests wait for a batch to form)."""
        return len(self._queue)

    async def run(self, job: Job) -> int:
        """Run ``job`` as one write of a batch (its own savepoint); its row count.

        What ``job`` raises (rolled back to its savepoint) is raised here.
        """
        return await self._submit(_Write(job))

    async def call[T](self, function: Callable[[sqlite3.Connection], T]) -> T:
        """``function`` of the connection on its thread, between batches and
        outside any transaction (what it raises is raised here)."""
        db = self._db
        return await self._thread.submit(lambda: function(db))

    async def _submit(self, write: "_Write") -> int:
        with self._lock:
            if self._scheduled:
                write.future = asyncio.get_running_loop().create_future()
            self._queue.append(write)
            self._scheduled = True
        future = write.future
        outcome = await (self._schedule() if future is None else future)
        if isinstance(outcome, sqlite3.Error):
            raise translate_sqlite_error(outcome) from outcome
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def _schedule(self) -> Outcome:
        try:
            queued = self._thread.submit(self._run_batch)
        except BaseException:
            # Refused before queueing (the thread shut down): nothing ran, and
            # no other task could join in between; the queue is this write.
            with self._lock:
                self._queue, self._scheduled = [], False
            raise
        # Cancelling the caller leaves the batch queued: it runs anyway and
        # answers the writes that joined it.
        return await queued

    def _run_batch(self) -> Outcome:
        """The job on the connection's thread: the queued writes, one transaction."""
        with self._lock:
            batch, self._queue = self._queue, []
            self._scheduled = False
        try:
            outcomes = _outcomes(self._db, batch)
        except BaseException as exc:  # an unexpected failure still answers everyone
            outcomes = [exc] * len(batch)
        self.transactions += 1
        if len(batch) > 1:
            joined = batch[1:]
            future = joined[0].future
            assert future is not None
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                future.get_loop().call_soon_threadsafe(_deliver, joined, outcomes[1:])
        return outcomes[0]


def _outcomes(db: sqlite3.Connection, batch: Sequence[_Write]) -> list[Outcome]:
    try:
        if len(batch) > 1:
            return _together(db, batch)
        return _lone_job(db, batch[0].job)
    except BaseException:  # rolled back, then re-raised unchanged
        with contextlib.suppress(sqlite3.Error):
            _roll_back(db)
        raise


def _deliver(joined: Sequence[_Write], outcomes: Sequence[Outcome]) -> None:
    for write, outcome in zip(joined, outcomes, strict=True):
        if write.future is not None and not write.future.done():  # not cancelled
            write.future.set_result(outcome)


def _lone_job(db: sqlite3.Connection, job: Job) -> list[Outcome]:
    # A job alone is its whole transaction: a ROLLBACK undoes exactly what a
    # savepoint's would, so it runs without one (two statements fewer a write).
    cursor = db.cursor()
    try:
        cursor.execute("BEGIN IMMEDIATE")  # waits for other processes (busy_timeout)
    except sqlite3.Error as exc:
        return [exc]
    try:
        rowcount = job(cursor)
    except Exception as exc:  # rolled back; the job's caller gets the error
        _roll_back(db)
        return [exc]
    try:
        cursor.execute("COMMIT")
    except sqlite3.Error as exc:
        _roll_back(db)
        return [exc]
    return [rowcount]


def _together(db: sqlite3.Connection, batch: Sequence[_Write]) -> list[Outcome]:
    cursor = db.cursor()
    try:
        cursor.execute("BEGIN IMMEDIATE")  # waits for other processes (busy_timeout)
    except sqlite3.Error as exc:
        return [exc] * len(batch)
    outcomes: list[Outcome] = []
    for write in batch:
        outcome = _in_savepoint(cursor, write)
        if not db.in_transaction:
            # The error ended the whole transaction (SQLITE_FULL, IOERR,
            # RAISE(ROLLBACK)): the writes before it are gone too.
            return [outcome] * len(batch)
        outcomes.append(outcome)
    try:
        cursor.execute("COMMIT")
    except sqlite3.Error as exc:
        _roll_back(db)
        return [exc] * len(batch)
    return outcomes


def _in_savepoint(cursor: sqlite3.Cursor, write: _Write) -> Outcome:
    cursor.execute("SAVEPOINT write")
    try:
        rowcount = write.job(cursor)
    except Exception as exc:  # undone to its savepoint; its caller gets the error
        if cursor.connection.in_transaction:
            cursor.execute("ROLLBACK TO write")
            cursor.execute("RELEASE write")
        return exc
    cursor.execute("RELEASE write")
    return rowcount


def _roll_back(db: sqlite3.Connection) -> None:
    if db.in_transaction:
        db.execute("ROLLBACK")


@contextlib.asynccontextmanager
async def open_group_commit(
    path: str, synchronous: Synchronous
) -> AsyncGenerator[GroupCommit]:
    """The write connection of ``path`` on a thread of its own; closed on exit."""
    thread = WriteThread("wenchang-sqlite-writes")
    try:
        # Made on its thread and used only there.
        db = await thread.submit(lambda: _connect(path, synchronous))
    except sqlite3.Error as exc:
        await thread.close()
        raise translate_sqlite_error(exc) from exc
    try:
        yield GroupCommit(db, thread)
    finally:
        await thread.submit(db.close)
        await thread.close()


def _connect(path: str, synchronous: Synchronous) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in pragmas(synchronous):
        db.execute(pragma)
    return db
