"""Rate-limit windows of this process: the default, a dict and a clock per request.

Tenchi's ``MemoryRateLimitStore`` takes an asyncio lock and rebuilds its whole
table of windows on every request. Here counting is one synchronous step (no
await, so no other request interleaves on the event loop) and expired windows
are swept at most once per window length. Fixed windows, as the SQLite and
Redis stores keep them: a window opens at its first request and admits
``limit`` units until it ends.
"""

from collections.abc import Callable
from dataclasses import dataclass
from math import isfinite
from time import monotonic

from app.infra.request_guards import Consumption, FixedWindowStore, WindowAnswer


@dataclass(slots=True)
class _Window:
    limit: int
    length: float
    used: int
    ends_at: float


class ProcessRateLimitStore(FixedWindowStore):
    """Fixed windows in process memory; ``take`` is the hot path of the HTTP hook."""

    def __init__(self, *, clock: Callable[[], float] = monotonic) -> None:
        self._clock = clock
        self._windows: dict[tuple[str, str], _Window] = {}
        self._sweep_at = 0.0

    def take(
        self, namespace: str, scope: str, limit: int, window_seconds: float, cost: int
    ) -> float | None:
        """Spend ``cost`` units of ``scope``'s window (None), or the seconds it
        has left when they are not there (nothing is spent)."""
        now = self._clock()
        if now >= self._sweep_at:
            self._sweep(now, window_seconds)
        key = (namespace, scope)
        window = self._windows.get(key)
        if (
            window is None
            or window.ends_at <= now
            or window.limit != limit
            or window.length != window_seconds
        ):
            window = _Window(limit, window_seconds, 0, now + window_seconds)
            self._windows[key] = window
        if window.used + cost > limit:
            return window.ends_at - now
        window.used += cost
        return None

    async def spend(self, consumption: Consumption) -> WindowAnswer:
        key, limit = (consumption.namespace, consumption.scope), consumption.limit
        window_seconds, cost = consumption.window_seconds, consumption.cost
        if not (isfinite(window_seconds) and window_seconds > 0 and 0 < cost <= limit):
            raise ValueError(
                "window_seconds must be finite and positive, cost in 1..limit"
            )
        left = self.take(*key, limit, window_seconds, cost)
        if left is not None:
            return WindowAnswer(False, 0, left)
        window = self._windows[key]
        return WindowAnswer(True, limit - window.used, window.ends_at - self._clock())

    def _sweep(self, now: float, window_seconds: float) -> None:
        self._windows = {
            key: window for key, window in self._windows.items() if window.ends_at > now
        }
        self._sweep_at = now + window_seconds
