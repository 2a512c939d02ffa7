"""GCS object requests with one deadline, bounded retries and error translation."""

import asyncio
import contextlib
import logging
import math
import random
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from app.infra.gcs_client import GcsClient, GcsLocation
from app.shared.errors import backend_unavailable_error

BACKOFF_SECONDS = 0.2
CONTENT_TYPE = "text/markdown; charset=utf-8"
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
TIMEOUT_STATUSES = frozenset({408, 504})
NOT_FOUND = frozenset({404})
PRECONDITION_FAILED = frozenset({412})

logger = logging.getLogger(__name__)


class GcsRefusedError(Exception):
    """GCS refused a request in a way retrying cannot fix (credentials, IAM, bucket)."""


class Refused(Exception):
    """GCS answered with a status the caller treats as an outcome (404, 412)."""


def _reason(failure: Exception) -> str:
    if isinstance(failure, TimeoutError):
        return "timeout"
    if isinstance(failure, aiohttp.ClientResponseError):
        return "timeout" if failure.status in TIMEOUT_STATUSES else "unavailable"
    return "unavailable"


class GcsObjects:
    """Objects of one bucket by full name.

    Each call runs inside one deadline (``timeout``) with at most ``attempts``
    tries on connection errors, 408/429/5xx and timeouts; conditional requests
    are safe to repeat because a landed attempt fails the precondition of the
    next. Failures past the deadline or the attempts become BackendUnavailable.
    """

    def __init__(self, client: GcsClient, location: GcsLocation) -> None:
        self._client = client
        self.bucket = location.bucket
        self._timeout = location.timeout
        self._attempts = location.attempts

    async def call[T](
        self,
        request: Callable[[int], Awaitable[T]],
        *,
        accept: frozenset[int] = frozenset(),
    ) -> T:
        """Run ``request`` with retries; every GCS failure is translated here.

        A status in ``accept`` raises Refused for the caller to interpret.
        """
        try:
            async with asyncio.timeout(self._timeout):
                return await self._retrying(request, accept)
        except TimeoutError as exc:
            logger.warning("GCS request to bucket %s timed out", self.bucket)
            raise backend_unavailable_error("timeout") from exc

    async def _retrying[T](
        self, request: Callable[[int], Awaitable[T]], accept: frozenset[int]
    ) -> T:
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
                    raise Refused(exc.status) from exc
                if exc.status not in RETRYABLE_STATUSES:
                    raise GcsRefusedError(
                        f"GCS answered {exc.status} for bucket {self.bucket} "
                        f"({exc.message}); check the bucket name, the credentials "
                        "and that they hold roles/storage.objectUser on it"
                    ) from exc
                failure = exc
            except (aiohttp.ClientError, TimeoutError) as exc:
                failure = exc
        assert failure is not None
        logger.warning("GCS bucket %s unavailable: %r", self.bucket, failure)
        raise backend_unavailable_error(_reason(failure)) from failure

    async def upload(
        self, name: str, data: bytes, metadata: dict[str, str], generation: str | None
    ) -> str | None:
        """Write ``name`` (only at ``generation`` when given; "0" = absent).

        Metadata travels in the same multipart upload as the body, so both
        commit together under one generation. None when the precondition failed.
        """
        parameters = {} if generation is None else {"ifGenerationMatch": generation}

        async def send(timeout: int) -> dict[str, Any]:
            return await self._client.upload(
                self.bucket,
                name,
                data,
                content_type=CONTENT_TYPE,
                parameters=dict(parameters),
                metadata={"metadata": metadata},
                timeout=timeout,
            )

        try:
            result = await self.call(send, accept=PRECONDITION_FAILED)
        except Refused:
            return None
        return str(result["generation"])

    async def describe(self, name: str) -> dict[str, Any] | None:
        """The object's resource (generation, size, metadata), or None."""
        try:
            return await self.call(
                lambda timeout: self._client.download_metadata(
                    self.bucket, name, timeout=timeout
                ),
                accept=NOT_FOUND,
            )
        except Refused:
            return None

    async def download(self, name: str, generation: str) -> bytes | None:
        """The body of exactly ``generation``; None once it is gone."""
        try:
            return await self.call(
                lambda timeout: self._client.download_generation(
                    self.bucket, name, generation, timeout=timeout
                ),
                accept=NOT_FOUND,
            )
        except Refused:
            return None

    async def delete(self, name: str, params: dict[str, str]) -> bool:
        """Delete under ``params`` (precondition or generation); False if refused."""
        try:
            await self.call(
                lambda timeout: self._client.delete(
                    self.bucket, name, params=dict(params), timeout=timeout
                ),
                accept=NOT_FOUND | PRECONDITION_FAILED,
            )
        except Refused:
            return False
        return True

    async def list(self, params: dict[str, str]) -> dict[str, Any]:
        return await self.call(
            lambda timeout: self._client.list_objects(
                self.bucket, params=dict(params), timeout=timeout
            )
        )

    async def erase(self, name: str, generation: str) -> None:
        """Remove one generation of ``name`` (gone already is fine)."""
        with contextlib.suppress(Refused):
            await self.delete(name, {"generation": generation})
