"""GCS storage: object generations are versions; every mutation is guarded by one."""

import asyncio
import contextlib
import logging
import math
import random
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from app.features.memory.ports import FileMetadata, ListedObject, StoredObject
from app.infra.gcs_client import GcsClient, GcsLocation, parse_gcs_url
from app.infra.object_metadata import metadata_from_map, metadata_to_map
from app.shared.errors import backend_unavailable_error

BACKOFF_SECONDS = 0.2
READ_ATTEMPTS = 3
LIST_BATCH = 1000
CONTENT_TYPE = "text/markdown; charset=utf-8"
LIST_FIELDS = "items(name,generation,metadata),nextPageToken"
COUNT_FIELDS = "items(name),nextPageToken"
SCRUB_FIELDS = "items(name,generation,timeDeleted),nextPageToken"
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
TIMEOUT_STATUSES = frozenset({408, 504})
NOT_FOUND = frozenset({404})
PRECONDITION_FAILED = frozenset({412})
_GENERATION = re.compile(r"[1-9][0-9]{0,18}")
_MAX_GENERATION = 2**63 - 1

logger = logging.getLogger(__name__)


class GcsRefusedError(Exception):
    """GCS refused a request in a way retrying cannot fix (credentials, IAM, bucket)."""


def _generation(version: str) -> str | None:
    """A version as a GCS generation, or None when it cannot be one."""
    if _GENERATION.fullmatch(version) and int(version) <= _MAX_GENERATION:
        return version
    return None


class _Refused(Exception):
    """GCS answered with a status the caller treats as an outcome (404, 412)."""


def _reason(failure: Exception) -> str:
    if isinstance(failure, TimeoutError):
        return "timeout"
    if isinstance(failure, aiohttp.ClientResponseError):
        return "timeout" if failure.status in TIMEOUT_STATUSES else "unavailable"
    return "unavailable"


class GcsStorage:
    """One bucket (and optional key prefix) as a Storage.

    Each call runs inside one deadline (``timeout``) with at most ``attempts``
    tries on connection errors, 408/429/5xx and timeouts; conditional requests
    are safe to repeat because a landed attempt fails the precondition of the
    next. Failures past the deadline or the attempts become BackendUnavailable.
    """

    def __init__(self, client: GcsClient, location: GcsLocation) -> None:
        self._client = client
        self._bucket = location.bucket
        self._prefix = location.prefix
        self._timeout = location.timeout
        self._attempts = location.attempts

    async def _call[T](
        self,
        request: Callable[[int], Awaitable[T]],
        *,
        accept: frozenset[int] = frozenset(),
    ) -> T:
        """Run ``request`` with retries; every GCS failure is translated here.

        A status in ``accept`` raises _Refused for the caller to interpret.
        """
        try:
            async with asyncio.timeout(self._timeout):
                return await self._retrying(request, accept)
        except TimeoutError as exc:
            logger.warning("GCS request to bucket %s timed out", self._bucket)
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
                    raise _Refused(exc.status) from exc
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

    async def _send(
        self,
        key: str,
        data: bytes,
        metadata: FileMetadata,
        parameters: dict[str, str],
        timeout: int,
    ) -> dict[str, Any]:
        # Metadata travels in the same multipart upload as the body, so both
        # commit together under one generation.
        return await self._client.upload(
            self._bucket,
            self._prefix + key,
            data,
            content_type=CONTENT_TYPE,
            parameters=dict(parameters),
            metadata={"metadata": metadata_to_map(metadata)},
            timeout=timeout,
        )

    async def _describe(self, name: str) -> dict[str, Any]:
        return await self._call(
            lambda timeout: self._client.download_metadata(
                self._bucket, name, timeout=timeout
            ),
            accept=NOT_FOUND,
        )

    async def _download(self, name: str, generation: str) -> bytes:
        return await self._call(
            lambda timeout: self._client.download_generation(
                self._bucket, name, generation, timeout=timeout
            ),
            accept=NOT_FOUND,
        )

    async def get(self, key: str) -> StoredObject | None:
        name = self._prefix + key
        for _ in range(READ_ATTEMPTS):
            try:
                described = await self._describe(name)
            except _Refused:
                return None
            generation = str(described["generation"])
            try:
                data = await self._download(name, generation)
            except _Refused:
                continue
            metadata = metadata_from_map(described.get("metadata") or {})
            return StoredObject(data, metadata, generation)
        logger.warning("GCS object kept changing while being read")
        raise backend_unavailable_error("unavailable")

    async def put(self, key: str, data: bytes, metadata: FileMetadata) -> str:
        result = await self._call(
            lambda timeout: self._send(key, data, metadata, {}, timeout)
        )
        return str(result["generation"])

    async def put_if_version(
        self, key: str, data: bytes, metadata: FileMetadata, expected: str | None
    ) -> str | None:
        generation = "0" if expected is None else _generation(expected)
        if generation is None:
            return None
        condition = {"ifGenerationMatch": generation}
        try:
            result = await self._call(
                lambda timeout: self._send(key, data, metadata, condition, timeout),
                accept=PRECONDITION_FAILED,
            )
        except _Refused:
            return None
        return str(result["generation"])

    async def delete_if_version(self, key: str, expected: str) -> bool:
        generation = _generation(expected)
        if generation is None:
            return False
        try:
            await self._call(
                lambda timeout: self._client.delete(
                    self._bucket,
                    self._prefix + key,
                    params={"ifGenerationMatch": generation},
                    timeout=timeout,
                ),
                accept=NOT_FOUND | PRECONDITION_FAILED,
            )
        except _Refused:
            return False
        return True

    async def _list(self, params: dict[str, str]) -> dict[str, Any]:
        return await self._call(
            lambda timeout: self._client.list_objects(
                self._bucket, params=dict(params), timeout=timeout
            )
        )

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
        params = {"prefix": self._prefix + prefix, "fields": LIST_FIELDS}
        params["maxResults"] = str(min(limit + 1, LIST_BATCH))
        if start_after is not None:
            # startOffset is inclusive; the object named start_after is dropped.
            params["startOffset"] = self._prefix + start_after
        page: list[ListedObject] = []
        while True:
            result = await self._list(params)
            for item in result.get("items", []):
                key = str(item["name"])[len(self._prefix) :]
                if start_after is not None and key <= start_after:
                    continue
                metadata = metadata_from_map(item.get("metadata") or {})
                page.append(ListedObject(key, metadata, str(item["generation"])))
                if len(page) == limit:
                    return page
            if not result.get("nextPageToken"):
                return page
            params["pageToken"] = str(result["nextPageToken"])

    async def count(self, prefix: str) -> int:
        params = {"prefix": self._prefix + prefix, "fields": COUNT_FIELDS}
        params["maxResults"] = str(LIST_BATCH)
        total = 0
        while True:
            result = await self._list(params)
            total += len(result.get("items", []))
            if not result.get("nextPageToken"):
                return total
            params["pageToken"] = str(result["nextPageToken"])

    async def ping(self) -> None:
        # Listing needs only storage.objects.list, which roles/storage.objectUser
        # grants; reading the bucket itself would need more.
        await self._list({"prefix": self._prefix, "maxResults": "1"})

    async def scrub(self, prefix: str) -> None:
        # With object versioning on, a delete leaves a noncurrent generation
        # (it has timeDeleted); those are erased. A bucket's soft-delete
        # retention is outside what the API can erase: disable it for purges.
        params = {"prefix": self._prefix + prefix, "versions": "true"}
        params |= {"fields": SCRUB_FIELDS, "maxResults": str(LIST_BATCH)}
        while True:
            result = await self._list(params)
            for item in result.get("items", []):
                if item.get("timeDeleted"):
                    await self._erase(str(item["name"]), str(item["generation"]))
            if not result.get("nextPageToken"):
                return
            params["pageToken"] = str(result["nextPageToken"])

    async def _erase(self, name: str, generation: str) -> None:
        with contextlib.suppress(_Refused):
            await self._call(
                lambda timeout: self._client.delete(
                    self._bucket,
                    name,
                    params={"generation": generation},
                    timeout=timeout,
                ),
                accept=NOT_FOUND,
            )


@asynccontextmanager
async def open_gcs_storage(url: str) -> AsyncGenerator[GcsStorage]:
    """A GcsStorage for ``url`` with its own HTTP session, closed on exit.

    Credentials come from the standard Google environment
    (GOOGLE_APPLICATION_CREDENTIALS, gcloud's application default credentials,
    or the metadata server); STORAGE_EMULATOR_HOST points at an emulator.
    """
    location = parse_gcs_url(url)
    timeout = aiohttp.ClientTimeout(total=location.timeout)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        yield GcsStorage(GcsClient(session=session), location)
