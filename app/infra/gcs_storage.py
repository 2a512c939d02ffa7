"""GCS storage: object generations are versions; every mutation is guarded by one."""

import contextlib
import logging
import re
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from app.features.memory.ports import FileMetadata, ListedObject, StoredObject
from app.infra.gcs_client import GcsClient, GcsLocation, parse_gcs_url
from app.infra.gcs_requests import (
    NOT_FOUND,
    PRECONDITION_FAILED,
    GcsRequests,
    StatusRefusal,
)
from app.infra.object_metadata import metadata_from_map, metadata_to_map
from app.shared.errors import backend_unavailable_error

READ_ATTEMPTS = 3
LIST_BATCH = 1000
CONTENT_TYPE = "text/markdown; charset=utf-8"
LIST_FIELDS = "items(name,generation,metadata),nextPageToken"
COUNT_FIELDS = "items(name),nextPageToken"
SCRUB_FIELDS = "items(name,generation,timeDeleted),nextPageToken"
_GENERATION = re.compile(r"[1-9][0-9]{0,18}")
_MAX_GENERATION = 2**63 - 1

logger = logging.getLogger(__name__)


def _generation(version: str) -> str | None:
    """A version as a GCS generation, or None when it cannot be one."""
    if _GENERATION.fullmatch(version) and int(version) <= _MAX_GENERATION:
        return version
    return None


class GcsStorage:
    """One bucket (and optional key prefix) as a Storage; requests run through
    ``GcsRequests`` (one deadline, bounded retries, failures translated)."""

    def __init__(self, client: GcsClient, location: GcsLocation) -> None:
        self._client = client
        self._bucket = location.bucket
        self._prefix = location.prefix
        self._requests = GcsRequests(
            location.bucket, timeout=location.timeout, attempts=location.attempts
        )
        self._call = self._requests.call

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
            except StatusRefusal:
                return None
            generation = str(described["generation"])
            try:
                data = await self._download(name, generation)
            except StatusRefusal:
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
        except StatusRefusal:
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
        except StatusRefusal:
            return False
        return True

    async def _list_objects(
        self, params: dict[str, str], timeout: int
    ) -> dict[str, Any]:
        return await self._client.list_objects(
            self._bucket, params=params, timeout=timeout
        )

    def _items(self, params: dict[str, str]) -> AsyncGenerator[dict[str, Any]]:
        return self._requests.pages(self._list_objects, params)

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
        params = {"prefix": self._prefix + prefix, "fields": LIST_FIELDS}
        params["maxResults"] = str(min(limit + 1, LIST_BATCH))
        if start_after is not None:
            # startOffset is inclusive; the object named start_after is dropped.
            params["startOffset"] = self._prefix + start_after
        page: list[ListedObject] = []
        async with contextlib.aclosing(self._items(params)) as items:
            async for item in items:
                key = str(item["name"])[len(self._prefix) :]
                if start_after is not None and key <= start_after:
                    continue
                metadata = metadata_from_map(item.get("metadata") or {})
                page.append(ListedObject(key, metadata, str(item["generation"])))
                if len(page) == limit:
                    break
        return page

    async def count(self, prefix: str) -> int:
        params = {"prefix": self._prefix + prefix, "fields": COUNT_FIELDS}
        params["maxResults"] = str(LIST_BATCH)
        return len([item async for item in self._items(params)])

    async def ping(self) -> None:
        # Listing needs only storage.objects.list, which roles/storage.objectUser
        # grants; reading the bucket itself would need more.
        params = {"prefix": self._prefix, "maxResults": "1"}
        await self._call(lambda timeout: self._list_objects(params, timeout))

    async def scrub(self, prefix: str) -> None:
        # With object versioning on, a delete leaves a noncurrent generation
        # (it has timeDeleted); those are erased. A bucket's soft-delete
        # retention is outside what the API can erase: disable it for purges.
        params = {"prefix": self._prefix + prefix, "versions": "true"}
        params |= {"fields": SCRUB_FIELDS, "maxResults": str(LIST_BATCH)}
        async for item in self._items(params):
            if item.get("timeDeleted"):
                await self._erase(str(item["name"]), str(item["generation"]))

    async def _erase(self, name: str, generation: str) -> None:
        with contextlib.suppress(StatusRefusal):
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
