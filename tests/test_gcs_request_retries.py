"""When one GCS request waits, how often it tries, and what it reports (no emulator).

The loopback server of ``tests/support/gcs_answers.py`` answers each attempt;
the waits between attempts are read by standing in for the request module's
``asyncio.sleep`` (recording, not waiting) and its ``random`` (fixed at 0.5).
"""

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from types import SimpleNamespace
from typing import cast

import aiohttp
import pytest
from tenchi.errors import AppError

import app.infra.gcs.requests as gcs_requests
from app.infra.gcs.requests import GcsRefusedError, GcsRequests, OutcomeUnknown
from app.infra.gcs.resources import ObjectPage
from app.shared.errors import backend_unavailable
from tests.support.gcs_answers import Answers, answering
from tests.support.loopback import LOOPBACK, free_port

BUCKET = "my-bucket"

type Get = Callable[[int], Awaitable[object]]


@pytest.fixture
async def server() -> AsyncGenerator[tuple[Answers, str]]:
    async with answering() as served:
        yield served


@pytest.fixture
async def session() -> AsyncGenerator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(raise_for_status=True) as opened:
        yield opened


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every wait the request module asks for, recorded instead of waited."""
    recorded: list[float] = []

    async def sleep(delay: float) -> None:
        recorded.append(delay)
        await asyncio.sleep(0)

    module = SimpleNamespace(sleep=sleep, timeout=asyncio.timeout)
    monkeypatch.setattr(gcs_requests, "asyncio", module)
    monkeypatch.setattr(gcs_requests, "random", SimpleNamespace(random=lambda: 0.5))
    return recorded


def getter(
    session: aiohttp.ClientSession, *urls: str, attempt_seconds: float | None = None
) -> Get:
    """A GET of ``urls`` in turn (the last one again after them), each
    attempt given ``attempt_seconds`` if set."""
    left = list(urls)

    async def get(timeout: int) -> object:
        url = left.pop(0) if len(left) > 1 else left[0]
        limit = aiohttp.ClientTimeout(total=attempt_seconds)
        async with session.get(url, timeout=limit) as response:
            return await response.json()

    return get


async def test_each_attempt_is_given_the_deadline_in_whole_seconds() -> None:
    requests = GcsRequests(BUCKET, timeout=2.5, attempts=1)
    given: list[int] = []

    async def list_objects(query: dict[str, str], timeout: int) -> ObjectPage:
        given.append(timeout)
        page = {"items": [{"name": "a"}]}
        return cast(
            ObjectPage, page if len(given) > 1 else page | {"nextPageToken": "t"}
        )

    names = [item["name"] async for item in requests.pages(list_objects, {})]

    assert names == ["a", "a"] and given == [3, 3]


async def test_a_listing_page_without_items_yields_nothing() -> None:
    """GCS leaves ``items`` out of an empty listing."""
    requests = GcsRequests(BUCKET, timeout=5, attempts=1)

    async def list_objects(query: dict[str, str], timeout: int) -> ObjectPage:
        return cast(ObjectPage, {})

    assert [item async for item in requests.pages(list_objects, {})] == []


async def test_a_throttled_request_waits_longer_each_time_without_spending_attempts(
    server: tuple[Answers, str], session: aiohttp.ClientSession, waits: list[float]
) -> None:
    """Three 429s then an answer, with one attempt: the waits are three quarters
    of 0.1, 0.2 and 0.4 s (random fixed at 0.5)."""
    answers, url = server
    answers.first = [429, 429, 429]
    requests = GcsRequests(BUCKET, timeout=5, attempts=1)

    assert await requests.call(getter(session, f"{url}/o")) == {"name": "x"}
    assert answers.seen == 4
    assert waits == pytest.approx([0.075, 0.15, 0.3])


async def test_failed_attempts_back_off_doubling_then_the_last_reports(
    server: tuple[Answers, str],
    session: aiohttp.ClientSession,
    waits: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Four attempts answered 503: a wait of half of 0.2, 0.4, 0.8 s between
    them (random fixed at 0.5), none after the last; the log names the bucket
    and the last failure."""
    answers, url = server
    answers.status = 503
    requests = GcsRequests(BUCKET, timeout=5, attempts=4)

    with (
        caplog.at_level(logging.WARNING, gcs_requests.__name__),
        pytest.raises(AppError) as raised,
    ):
        await requests.call(getter(session, f"{url}/o"))

    assert raised.value.details["reason"] == "unavailable" and answers.seen == 4
    assert waits == pytest.approx([0.1, 0.2, 0.4])
    assert [record.getMessage() for record in caplog.records] == [
        f"GCS bucket {BUCKET} unavailable: {raised.value.__cause__!r}"
    ]


async def test_a_refused_request_is_not_retried_and_names_the_fix(
    server: tuple[Answers, str], session: aiohttp.ClientSession
) -> None:
    answers, url = server
    answers.status = 403
    requests = GcsRequests(BUCKET, timeout=5, attempts=3)

    with pytest.raises(GcsRefusedError) as raised:
        await requests.call(getter(session, f"{url}/o"), mutation=True)

    assert answers.seen == 1
    assert str(raised.value) == (
        f"GCS answered 403 for bucket {BUCKET} (Forbidden); check the bucket "
        "name, the credentials and that they hold roles/storage.objectUser on it"
    )


async def test_a_mutation_refused_at_its_first_attempt_is_that_refusal(
    server: tuple[Answers, str], session: aiohttp.ClientSession
) -> None:
    """Nothing went unanswered before the 412: the outcome is known."""
    answers, url = server
    answers.first = [412]
    requests = GcsRequests(BUCKET, timeout=5, attempts=2)

    with pytest.raises(gcs_requests.StatusRefusal) as raised:
        await requests.call(
            getter(session, f"{url}/o"), accept=frozenset({412}), mutation=True
        )

    assert raised.value.args == (412,) and answers.seen == 1


async def test_a_call_is_a_read_unless_said_otherwise(
    server: tuple[Answers, str], session: aiohttp.ClientSession
) -> None:
    """A read answered 503 every time is unavailable, never an unknown outcome."""
    answers, url = server
    answers.status = 503
    requests = GcsRequests(BUCKET, timeout=5, attempts=2)

    with pytest.raises(AppError) as raised:
        await requests.call(getter(session, f"{url}/o"))

    assert raised.value.definition is backend_unavailable


@pytest.mark.parametrize("answered_first", [False, True])
async def test_a_backend_refusing_connections_is_unavailable(
    server: tuple[Answers, str], session: aiohttp.ClientSession, answered_first: bool
) -> None:
    """A refused connection never reached GCS: a mutation's outcome is known,
    unless an earlier attempt went unanswered (a 503 first)."""
    answers, url = server
    answers.status = 503
    closed = f"http://{LOOPBACK}:{free_port()}/o"
    urls = [f"{url}/o", closed] if answered_first else [closed]
    requests = GcsRequests(BUCKET, timeout=5, attempts=2)

    with pytest.raises((AppError, OutcomeUnknown)) as raised:
        await requests.call(getter(session, *urls), mutation=True)

    if answered_first:
        assert isinstance(raised.value, OutcomeUnknown) and raised.value.status is None
    else:
        assert isinstance(raised.value, AppError)
        assert raised.value.details["reason"] == "unavailable"


@pytest.mark.parametrize("mutation", [False, True])
async def test_attempts_that_time_out_are_a_timeout(
    server: tuple[Answers, str], session: aiohttp.ClientSession, mutation: bool
) -> None:
    """Each attempt gives up before the answer comes: a read is unavailable
    with reason timeout after every attempt, a mutation's outcome unknown."""
    answers, url = server
    answers.delay = 0.5
    requests = GcsRequests(BUCKET, timeout=5, attempts=2)
    get = getter(session, f"{url}/o", attempt_seconds=0.05)

    with pytest.raises((AppError, OutcomeUnknown)) as raised:
        await requests.call(get, mutation=mutation)

    assert answers.seen == 2
    if mutation:
        assert isinstance(raised.value, OutcomeUnknown) and raised.value.status is None
    else:
        assert isinstance(raised.value, AppError)
        assert raised.value.details["reason"] == "timeout"


@pytest.mark.parametrize("mutation", [False, True])
async def test_a_call_past_its_deadline_is_a_timeout(
    server: tuple[Answers, str],
    session: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
    mutation: bool,
) -> None:
    """The deadline ends the call while its attempt waits: a read is
    unavailable with reason timeout, a mutation's outcome unknown."""
    answers, url = server
    answers.delay = 1.0
    requests = GcsRequests(BUCKET, timeout=0.2, attempts=3)

    with (
        caplog.at_level(logging.WARNING, gcs_requests.__name__),
        pytest.raises((AppError, OutcomeUnknown)) as raised,
    ):
        await requests.call(getter(session, f"{url}/o"), mutation=mutation)

    assert answers.seen == 1
    assert [record.getMessage() for record in caplog.records] == [
        f"GCS request to bucket {BUCKET} timed out"
    ]
    if mutation:
        assert isinstance(raised.value, OutcomeUnknown) and raised.value.status is None
    else:
        assert isinstance(raised.value, AppError)
        assert raised.value.details["reason"] == "timeout"
