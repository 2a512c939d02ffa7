"""How one GCS request is retried and how its failure is reported (no emulator).

A loopback HTTP server answers each attempt with the status a test scripts, so
the retry rules of ``app/infra/gcs/requests.py`` meet real HTTP answers.
"""

from collections.abc import AsyncGenerator
from typing import cast

import aiohttp
import pytest
from tenchi.errors import AppError

from app.infra.gcs.requests import (
    RATE_LIMIT_BACKOFF_CAP_SECONDS,
    RATE_LIMIT_BACKOFF_SECONDS,
    GcsRequests,
    OutcomeUnknown,
    StatusRefusal,
    _rate_limit_wait,  # pyright: ignore[reportPrivateUsage]
)
from app.infra.gcs.resources import ObjectPage
from app.shared.errors import backend_unavailable
from tests.support.gcs_answers import Answers, answering


@pytest.fixture
async def server() -> AsyncGenerator[tuple[Answers, str]]:
    async with answering() as served:
        yield served


async def _failure(
    url: str, *, mutation: bool, accept: frozenset[int] = frozenset()
) -> BaseException:
    """What a call that does not succeed in two attempts raises."""
    requests = GcsRequests("bucket", timeout=5, attempts=2)
    async with aiohttp.ClientSession(raise_for_status=True) as session:

        async def get(timeout: int) -> object:
            async with session.get(f"{url}/o") as response:
                return await response.json()

        with pytest.raises((AppError, OutcomeUnknown, StatusRefusal)) as raised:
            await requests.call(get, mutation=mutation, accept=accept)
    return raised.value


@pytest.mark.parametrize(
    ("status", "reason"), [(408, "timeout"), (504, "timeout"), (503, "unavailable")]
)
async def test_a_request_failing_every_attempt_is_unavailable_with_its_reason(
    server: tuple[Answers, str], status: int, reason: str
) -> None:
    """A read answered 408 or 504 on every attempt is a timeout, any other
    retryable status unavailable; it is tried ``attempts`` times."""
    answers, url = server
    answers.status = status

    failure = await _failure(url, mutation=False)

    assert isinstance(failure, AppError)
    assert failure.definition is backend_unavailable
    assert failure.details["reason"] == reason
    assert answers.seen == 2


async def test_a_mutation_answered_5xx_every_time_has_an_unknown_outcome(
    server: tuple[Answers, str],
) -> None:
    """A 503 may come after the change was applied: the caller must look."""
    answers, url = server
    answers.status = 503

    failure = await _failure(url, mutation=True)

    assert isinstance(failure, OutcomeUnknown) and failure.status is None


@pytest.mark.parametrize("mutation", [False, True])
async def test_a_refusal_after_an_unanswered_attempt_is_an_unknown_outcome(
    server: tuple[Answers, str], mutation: bool
) -> None:
    """A 412 after a 503 may be the first attempt's own change meeting the
    retry's precondition: for a mutation the outcome is unknown (naming the
    412); for a read it is the refusal itself."""
    answers, url = server
    answers.first = [503, 412]

    failure = await _failure(url, mutation=mutation, accept=frozenset({412}))

    if mutation:
        assert isinstance(failure, OutcomeUnknown) and failure.status == 412
        assert failure.args == (412,)  # what its repr in a log shows
    else:
        assert isinstance(failure, StatusRefusal) and failure.args == (412,)


async def test_a_listing_is_read_page_after_page_with_its_query(
    server: tuple[Answers, str],
) -> None:
    """Every page is asked with the listing's own parameters and the token the
    page before it gave; the listing ends at the page without one."""
    answers, url = server
    requests = GcsRequests("bucket", timeout=5, attempts=2)
    async with aiohttp.ClientSession(raise_for_status=True) as session:

        async def list_objects(query: dict[str, str], timeout: int) -> ObjectPage:
            async with session.get(f"{url}/list", params=query) as response:
                return cast(ObjectPage, await response.json())

        names: list[object] = []
        async for item in requests.pages(list_objects, {"prefix": "p/"}):
            names.append(item["name"])
            if len(names) > 2:
                break  # a listing that never ends fails here, not by hanging

    assert names == ["a", "b"]
    assert answers.queries == [{"prefix": "p/"}, {"prefix": "p/", "pageToken": "t1"}]


@pytest.mark.parametrize("throttled", range(1, 9))
def test_a_throttled_request_waits_between_half_and_all_of_its_ceiling(
    throttled: int,
) -> None:
    """After the n-th 429 the wait is drawn between half and all of a ceiling
    that doubles from RATE_LIMIT_BACKOFF_SECONDS up to the cap: never zero."""
    ceiling = min(
        RATE_LIMIT_BACKOFF_CAP_SECONDS,
        RATE_LIMIT_BACKOFF_SECONDS * 2 ** (throttled - 1),
    )
    waits = [_rate_limit_wait(throttled) for _ in range(400)]

    assert all(ceiling / 2 <= wait <= ceiling for wait in waits)
    assert min(waits) < ceiling * 0.55 and max(waits) > ceiling * 0.95
