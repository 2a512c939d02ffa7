"""The tool's retry schedule: 8 attempts, a random wait before each retry that
at most doubles, none before the first."""

import pytest

from app.features.memory_tool.domain import edit_attempts as schedule


async def test_eight_attempts_with_a_growing_random_wait_before_each_retry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits: list[float] = []
    bounds: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    def uniform(low: float, high: float) -> float:
        assert low == 0
        bounds.append(high)
        return high / 2

    monkeypatch.setattr(schedule.anyio, "sleep", sleep)
    monkeypatch.setattr(schedule.random, "uniform", uniform)

    attempts = [attempt async for attempt in schedule.edit_attempts()]

    assert attempts == list(range(8)) and schedule.EDIT_ATTEMPTS == 8
    assert bounds == [0.025 * 2**n for n in range(7)]
    assert waits == [bound / 2 for bound in bounds]
