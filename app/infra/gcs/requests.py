"""One GCS request under one deadline with bounded retries; failures translated here.

A call runs inside one deadline (``timeout``) with at most ``attempts`` tries
on connection errors, 408/5xx and timeouts; conditional requests are safe
to repeat because a landed attempt fails the precondition of the next. A 429
(GCS allows about one mutation per second per object) applied nothing, so it
is retried with growing, jittered waits for as long as the deadline allows,
without spending attempts. Failures past the deadline or the attempts become
BackendUnavailable (503 with Retry-After).

A mutation's attempt that went unanswered (timeout, lost connection, 5xx)
may have landed; if the call then fails, or a retry meets a precondition that
attempt may have spent, the call raises OutcomeUnknown for the caller to
resolve by looking at the object, never guessing.
"""

import asyncio
import logging
import math
import random
from collections.abc import AsyncGenerator, Awaitable, Callable

import aiohttp
from tenchi.errors import AppError

from app.infra.gcs.resources import ObjectPage, ObjectResource
from app.shared.errors import backend_unavailable_error

BACKOFF_SECONDS = 0.2
RATE_LIMITED = 429
RATE_LIMIT_BACKOFF_SECONDS = 0.1
RATE_LIMIT_BACKOFF_CAP_SECONDS = 2.0
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
TIMEOUT_STATUSES = frozenset({408, 504})
NOT_FOUND = frozenset({404})
PRECONDITION_FAILED = frozenset({412})
UNANSWERED_STATUSES = frozenset({408, 500, 502, 503, 504})
"""Statuses after which a mutation may or may not have been applied."""

logger = logging.getLogger(__name__)

type Request[T] = Callable[[int], Awaitable[T]]
"""A request given its per-attempt timeout in whole seconds."""
type ListObjects = Callable[[dict[str, str], int], Awaitable[ObjectPage]]
"""One page of a listing: its query parameters and the timeout."""


class GcsRefusedError(Exception):
    """GCS refused a request in a way retrying cannot fix (credentials, IAM, bucket)."""


class StatusRefusal(Exception):
    """GCS answered with a status the caller treats as an outcome (404, 412)."""


class OutcomeUnknown(Exception):
    """A mutation attempt may have landed unanswered; then the call failed or a
    retry was refused (``status``, None when the call ran out of time or tries)."""

    def __init__(self, status: int | None) -> None:
        super().__init__(status)
        self.status = status


class _Attempts:
    """Whether an attempt of one call may have landed without its answer."""

    __slots__ = ("unanswered",)

    def __init__(self) -> None:
        self.unanswered = False


def _reason(failure: Exception) -> str:
    if isinstance(failure, TimeoutError):
        return "timeout"
    if isinstance(failure, aiohttp.ClientResponseError):
        return "timeout" if failure.status in TIMEOUT_STATUSES else "unavailable"
    return "unavailable"


class GcsRequests:
    """Runs the requests of one bucket with its deadline and attempts."""

    def __init__(self, bucket: str, *, timeout: float, attempts: int) -> None:
        self._bucket = bucket
        self._timeout = timeout
        self._attempts = attempts

    async def call[T](
        self,
        request: Request[T],
        *,
        accept: frozenset[int] = frozenset(),
        mutation: bool = False,
    ) -> T:
        """Run ``request``; a status in ``accept`` raises StatusRefusal.

        For a ``mutation`` whose outcome is in doubt, OutcomeUnknown instead.
        """
        attempts = _Attempts()
        try:
            async with asyncio.timeout(self._timeout):
                return await self._retrying(request, accept, attempts)
        except TimeoutError as exc:
            logger.warning("GCS request to bucket %s timed out", self._bucket)
            if mutation and attempts.unanswered:
                raise OutcomeUnknown(None) from exc
            raise backend_unavailable_error("timeout") from exc
        except StatusRefusal as refusal:
            if mutation and attempts.unanswered:
                raise OutcomeUnknown(refusal.args[0]) from refusal
            raise
        except AppError:
            if mutation and attempts.unanswered:
                raise OutcomeUnknown(None) from None
            raise

    async def pages(
        self, list_objects: ListObjects, params: dict[str, str]
    ) -> AsyncGenerator[ObjectResource]:
        """Every item a listing with ``params`` returns, page after page."""
        query = dict(params)
        while True:
            result = await self.call(lambda timeout: list_objects(dict(query), timeout))
            for item in result.get("items", []):
                yield item
            token = result.get("nextPageToken")
            if not token:
                return
            query["pageToken"] = str(token)

    async def _retrying[T](
        self, request: Request[T], accept: frozenset[int], attempts: _Attempts
    ) -> T:
        failure: Exception | None = None
        attempt = throttled = 0
        while attempt < self._attempts:
            # Until its answer arrives, an attempt may land.
            earlier, attempts.unanswered = attempts.unanswered, True
            try:
                return await request(math.ceil(self._timeout))
            except aiohttp.ClientResponseError as exc:
                if exc.status not in UNANSWERED_STATUSES:
                    attempts.unanswered = earlier
                if exc.status in accept:
                    raise StatusRefusal(exc.status) from exc
                if exc.status not in RETRYABLE_STATUSES:
                    raise GcsRefusedError(
                        f"GCS answered {exc.status} for bucket {self._bucket} "
                        f"({exc.message}); check the bucket name, the credentials "
                        "and that they hold roles/storage.objectUser on it"
                    ) from exc
                failure = exc
            except aiohttp.ClientConnectorError as exc:
                attempts.unanswered = earlier  # never reached GCS
                failure = exc
            except (aiohttp.ClientError, TimeoutError) as exc:
                failure = exc
            if _rate_limited(failure):
                throttled += 1
                await asyncio.sleep(_rate_limit_wait(throttled))
                continue
            attempt += 1
            if attempt < self._attempts:
                await asyncio.sleep(
                    BACKOFF_SECONDS * 2 ** (attempt - 1) * random.random()
                )
        assert failure is not None
        logger.warning("GCS bucket %s unavailable: %r", self._bucket, failure)
        raise backend_unavailable_error(_reason(failure)) from failure


def _rate_limited(failure: Exception | None) -> bool:
    return (
        isinstance(failure, aiohttp.ClientResponseError)
        and failure.status == RATE_LIMITED
    )


def _rate_limit_wait(throttled: int) -> float:
    """Exponential with equal jitter: never zero, so a hot object is not hammered."""
    ceiling = min(
        RATE_LIMIT_BACKOFF_CAP_SECONDS,
        RATE_LIMIT_BACKOFF_SECONDS * 2 ** (throttled - 1),
    )
    return ceiling / 2 + random.random() * ceiling / 2
