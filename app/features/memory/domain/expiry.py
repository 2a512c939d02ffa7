"""When a file expires: what a write sets, what it keeps, and whether it is gone."""

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from ..ports import FileMetadata, ListedObject


class Expiry:
    """Whether a file has expired by the clock's moment, read once when needed.

    A file that never expires costs no clock read: a read of such files
    stamps nothing and sees the clock no later than it used to.
    """

    __slots__ = ("_clock", "_now")

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock
        self._now: datetime | None = None

    def expired(self, meta: FileMetadata) -> bool:
        """From its ``expires_at`` on, a file is gone for every reader."""
        if meta.expires_at is None:
            return False
        if self._now is None:
            self._now = self._clock()
        return meta.expires_at <= self._now

    def next_after_now(self, moments: Iterable[datetime]) -> datetime | None:
        """The earliest of ``moments`` still to come (None: none is)."""
        pending = None
        for moment in moments:
            if self._now is None:
                self._now = self._clock()
            if moment > self._now and (pending is None or moment < pending):
                pending = moment
        return pending


def written_expiry(
    asked: tuple[bool, datetime | None, int | None],
    kept: datetime | None,
    *,
    now: datetime,
    area_seconds: int | None,
) -> datetime | None:
    """The expiry a whole write gives the file.

    ``asked`` is (``expires_at`` given, ``expires_at``, ``ttl_seconds``): a
    given ``expires_at`` (null clears) or a ``ttl_seconds`` wins; else a
    replaced file keeps ``kept`` and a new one takes the area's default.
    """
    given, expires_at, ttl_seconds = asked
    if ttl_seconds is not None:
        return now + timedelta(seconds=ttl_seconds)
    if given:
        return expires_at
    if kept is not None:
        return kept
    return None if area_seconds is None else now + timedelta(seconds=area_seconds)


def unexpired(listed: Iterable[ListedObject], now: Expiry) -> list[ListedObject]:
    """The files of ``listed`` that have not expired."""
    return [item for item in listed if not now.expired(item.metadata)]
