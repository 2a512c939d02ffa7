"""One GCS request under one deadline with bounded retries; failures translated here.

A call runs inside one deadline (``timeout``) with at most ``attempts`` tries
on connection errors, 408/429/5xx and timeouts; conditional requests are safe
to repeat because a landed attempt fails the precondition of the next. Failures
past the deadline or the attempts become BackendUnavailable.
"""

import asyncio
import logging
import math
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import aiohttp

from app.shared.errors import backend_unavailable_error

BACKOFF_SECONDS = 0.2
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
TIMEOUT_STATUSES = frozenset({408, 504})
NOT_FOUND = frozenset({404})
PRECONDITION_FAILED = frozenset({412})

logger = logging.getLogger(__name__)

type Request[T] = Callable[[int], Awaitable[T]]
"""A request given its per-attempt timeout in whole seconds."""
type ListObjects = Callable[[dict[str, str], int], Awaitable[dict[str, Any]]]
"""One page of a listing: its query parameters and the timeout."""


class GcsRefusedError(Exception):
    """GCS refused a request in a way retrying cannot fix (credentials, IAM, bucket)."""


class StatusRefusal(Exception):
    """GCS answered with a status the caller treats as an outcome (404, 412)."""


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
        self, request: Request[T], *, accept: frozenset[int] = frozenset()
    ) -> T:
        """Run ``request``; a status in ``accept`` raises StatusRefusal."""
        try:
            async with asyncio.timeout(self._timeout):
                return await self._retrying(request, accept)
        except TimeoutError as exc:
            logger.warning("GCS request to bucket %s timed out", self._bucket)
            raise backend_unavailable_error("timeout") from exc

    async def pages(
        self, list_objects: ListObjects, params: dict[str, str]
    ) -> AsyncGenerator[dict[str, Any]]:
        """Every item a listing with ``params`` returns, page after page."""
        query = dict(params)
        while True:
            result = await self.call(lambda timeout: list_objects(dict(query), timeout))
            for item in result.get("items", []):
                yield item
            if not result.get("nextPageToken"):
                return
            query["pageToken"] = str(result["nextPageToken"])

    async def _retrying[T](self, request: Request[T], accept: frozenset[int]) -> T:
        failure: Exception | None = None
        for attempt in range(self._attempts):
            if attempt:
                await asyncio.sleep(
                    BACKOFF_SECONDS * 2 ** (attempt - 1) * random.random()
                )
            try:
                return await request(math.ceil(self._timeout))
            except aiohttp.ClientResponseError as exc:
                if exc.status in accept:
                    raise StatusRefusal(exc.status) from exc
                if exc.status not in RETRYABLE_STATUSES:
                    raise GcsRefusedError(
                        f"GCS answered {exc.status} for bucket {self._bucket} "
                        f"({exc.message}); check the bucket name, the credentials "
                        "and that they hold roles/storage.objectUser on it"
                    ) from exc
                failure = exc
            except (aiohttp.ClientError, TimeoutError) as exc:
                failure = exc
        assert failure is not None
        logger.warning("GCS bucket %s unavailable: %r", self._bucket, failure)
        raise backend_unavailable_error(_reason(failure)) from failure
