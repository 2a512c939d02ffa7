"""Group commit: the writes that queue while one batch commits share the next one.

A write joins the queue of the storage connection; the first write of an empty
queue schedules a batch on the connection's thread, and every write that
arrives before that batch starts joins it. No timer: a batch grows only while
the thread is busy (committing the previous batch, answering a read). A batch
of one is its statement in a savepoint, which commits it. A larger one is ONE
``BEGIN IMMEDIATE`` … ``COMMIT`` run as ONE job on the thread (so no read of the
connection sees it half done), each write inside its own savepoint: a write
whose statement fails is rolled back alone and gets its own error, the others
land. A write learns its outcome only once its batch's ``COMMIT`` returned; if
the transaction cannot commit (or an error ends it early, as ``SQLITE_FULL``
does), it is rolled back and every write of the batch fails with that error.
A job alone in its batch is the whole transaction and needs no savepoint.

A write may also be a job (``run``): a function of the connection that reads
and writes in its savepoint, so an edit's read and its guarded write are one
trip to the thread. A batch holding a job always takes ``BEGIN IMMEDIATE``
first: the job's read then sees the last commit of every process, which a
deferred transaction upgraded to a write could not promise.
"""

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable, Sequence

import aiosqlite

from .sqlite_connection import translate_sqlite_error

type Outcome = int | BaseException
"""A write's row count (did its compare-and-swap land), or what refused it."""
type Job = Callable[[sqlite3.Connection], int]
"""Reads and writes on the connection inside a write's savepoint; its row count."""


class _Write:
    __slots__ = ("future", "job", "parameters", "sql")

    def __init__(
        self, sql: str, parameters: Sequence[object], job: Job | None = None
    ) -> None:
        self.sql = sql
        self.parameters = parameters
        self.job = job
        self.future: asyncio.Future[Outcome] | None = None
        """None for the write whose job runs the batch: the job's result is its own."""


class GroupCommit:
    """The write statements of one aiosqlite connection, committed in batches."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self.connection = connection
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

    async def write(self, sql: str, parameters: Sequence[object]) -> int:
        """Run one write statement with the writes queued beside it; its row count."""
        return await self._submit(_Write(sql, parameters))

    async def run(self, job: Job) -> int:
        """Run ``job`` as one write of a batch (its own savepoint); its row count.

        What ``job`` raises (rolled back to its savepoint) is raised here.
        """
        return await self._submit(_Write("", (), job))

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
        # aiosqlite has no public way to run a callable on its thread; its
        # private ``_execute(fn)`` (queue ``fn``, await its result) has been the
        # core of every release and aiosqlite is pinned exactly in pyproject.
        # tests/test_sqlite_group_commit.py fails at once if it moves.
        execute = self.connection._execute  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType, reportUnknownVariableType]
        try:
            outcome: Outcome = await execute(self._run_batch)
        except asyncio.CancelledError:
            raise  # the job is queued: it runs and answers the others
        except BaseException:
            # Refused before queueing (a closed connection): nothing ran, and
            # no other task could join in between; the queue is this write.
            with self._lock:
                self._queue, self._scheduled = [], False
            raise
        return outcome

    def _run_batch(self) -> Outcome:
        """The job on the connection's thread: the queued writes, one transaction."""
        with self._lock:
            batch, self._queue = self._queue, []
            self._scheduled = False
        try:
            db: sqlite3.Connection = self.connection._conn  # pyright: ignore[reportPrivateUsage]
            outcomes = _outcomes(db, batch)
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
        if batch[0].job is None:
            return _alone(db, batch[0])
        return _lone_job(db, batch[0].job)
    except BaseException:  # rolled back, then re-raised unchanged
        with contextlib.suppress(sqlite3.Error):
            _roll_back(db)
        raise


def _deliver(joined: Sequence[_Write], outcomes: Sequence[Outcome]) -> None:
    for write, outcome in zip(joined, outcomes, strict=True):
        if write.future is not None and not write.future.done():  # not cancelled
            write.future.set_result(outcome)


def _alone(db: sqlite3.Connection, write: _Write) -> list[Outcome]:
    # Outside a transaction a savepoint is one (deferred): its RELEASE commits.
    # Unlike a bare autocommit statement, a failing statement (even one that
    # fails after changing rows, as RAISE(FAIL) does) leaves nothing behind.
    try:
        return [_in_savepoint(db, write)]
    except sqlite3.Error as exc:  # the commit failed
        _roll_back(db)
        return [exc]


def _lone_job(db: sqlite3.Connection, job: Job) -> list[Outcome]:
    # A job alone is its whole transaction: a ROLLBACK undoes exactly what a
    # savepoint's would, so it runs without one (two statements fewer a write).
    try:
        db.execute("BEGIN IMMEDIATE")  # waits for other processes (busy_timeout)
    except sqlite3.Error as exc:
        return [exc]
    try:
        rowcount = job(db)
    except Exception as exc:  # rolled back; the job's caller gets the error
        _roll_back(db)
        return [exc]
    try:
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        _roll_back(db)
        return [exc]
    return [rowcount]


def _together(db: sqlite3.Connection, batch: Sequence[_Write]) -> list[Outcome]:
    try:
        db.execute("BEGIN IMMEDIATE")  # waits for other processes (busy_timeout)
    except sqlite3.Error as exc:
        return [exc] * len(batch)
    outcomes: list[Outcome] = []
    for write in batch:
        outcome = _in_savepoint(db, write)
        if not db.in_transaction:
            # The error ended the whole transaction (SQLITE_FULL, IOERR,
            # RAISE(ROLLBACK)): the writes before it are gone too.
            return [outcome] * len(batch)
        outcomes.append(outcome)
    try:
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        _roll_back(db)
        return [exc] * len(batch)
    return outcomes


def _in_savepoint(db: sqlite3.Connection, write: _Write) -> Outcome:
    db.execute("SAVEPOINT write")
    try:
        if write.job is None:
            rowcount = db.execute(write.sql, write.parameters).rowcount
        else:
            rowcount = write.job(db)
    except Exception as exc:  # undone to its savepoint; its caller gets the error
        if db.in_transaction:
            db.execute("ROLLBACK TO write")
            db.execute("RELEASE write")
        return exc
    db.execute("RELEASE write")
    return rowcount


def _roll_back(db: sqlite3.Connection) -> None:
    if db.in_transaction:
        db.execute("ROLLBACK")
