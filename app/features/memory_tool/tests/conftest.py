"""The memory tool tests' fixtures."""

import pytest

from app.features.memory_tool.domain import edit_attempts as schedule


@pytest.fixture
def no_retry_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries of a lost race follow at once: the tests count attempts, not time."""

    async def no_wait(seconds: float) -> None:
        return None

    monkeypatch.setattr(schedule.anyio, "sleep", no_wait)
