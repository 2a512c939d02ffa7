"""The object requests the GCS adapter makes, by full object name, each one guarded.

Every request runs through ``GcsRequests`` (one deadline, bounded retries,
failures translated); 404 and 412 come back as plain outcomes.
"""

import contextlib
from collections.abc import AsyncGenerator
from typing import cast

from app.infra.gcs.client import GcsClient
from app.infra.gcs.location import GcsLocation
from app.infra.gcs.requests import (
    NOT_FOUND,
    PRECONDITION_FAILED,
    GcsRequests,
    StatusRefusal,
)
from app.infra.gcs.resources import ObjectPage, ObjectResource

CONTENT_TYPE = "text/markdown; charset=utf-8"


class GcsObjects:
    """Objects of one bucket."""

    def __init__(self, client: GcsClient, location: GcsLocation) -> None:
        self._client = client
        self.bucket = location.bucket
        self._requests = GcsRequests(
            location.bucket, timeout=location.timeout, attempts=location.attempts
        )

    async def upload(
        self, name: str, data: bytes, metadata: dict[str, str], generation: str | None
    ) -> str | None:
        """Write ``name`` (only at ``generation`` when given; "0" = absent).

        Metadata travels in the same multipart upload as the body, so both
        commit together under one generation. None when the precondition failed;
        OutcomeUnknown when an unanswered attempt may have landed first.
        """
        parameters = {} if generation is None else {"ifGenerationMatch": generation}

        async def send(timeout: int) -> ObjectResource:
            uploaded = await self._client.upload(
                self.bucket,
                name,
                data,
                content_type=CONTENT_TYPE,
                parameters=dict(parameters),
                metadata={"metadata": metadata},
                timeout=timeout,
            )
            return cast(ObjectResource, uploaded)

        try:
            result = await self._requests.call(
                send, accept=PRECONDITION_FAILED, mutation=generation is not None
            )
        except StatusRefusal:
            return None
        return str(result["generation"])

    async def describe(self, name: str) -> ObjectResource | None:
        """The object's resource (generation, size, metadata), or None."""
        try:
            described = await self._requests.call(
                lambda timeout: self._client.download_metadata(
                    self.bucket, name, timeout=timeout
                ),
                accept=NOT_FOUND,
            )
        except StatusRefusal:
            return None
        return cast(ObjectResource, described)

    async def download(self, name: str, generation: str) -> bytes | None:
        """The body of exactly ``generation``; None once it is gone."""
        try:
            return await self._requests.call(
                lambda timeout: self._client.download_generation(
                    self.bucket, name, generation, timeout=timeout
                ),
                accept=NOT_FOUND,
            )
        except StatusRefusal:
            return None

    async def delete(self, name: str, params: dict[str, str]) -> bool:
        """Delete under ``params`` (precondition or generation); False if refused."""
        try:
            await self._requests.call(
                lambda timeout: self._client.delete(
                    self.bucket, name, params=dict(params), timeout=timeout
                ),
                accept=NOT_FOUND | PRECONDITION_FAILED,
            )
        except StatusRefusal:
            return False
        return True

    async def erase(self, name: str, generation: str) -> None:
        """Remove one generation of ``name`` (gone already is fine)."""
        with contextlib.suppress(StatusRefusal):
            await self.delete(name, {"generation": generation})

    async def _list_objects(self, params: dict[str, str], timeout: int) -> ObjectPage:
        page = await self._client.list_objects(
            self.bucket, params=params, timeout=timeout
        )
        return cast(ObjectPage, page)

    async def list(self, params: dict[str, str]) -> ObjectPage:
        """One page of a listing."""
        return await self._requests.call(
            lambda timeout: self._list_objects(dict(params), timeout)
        )

    def items(self, params: dict[str, str]) -> AsyncGenerator[ObjectResource]:
        """Every item of a listing, page after page."""
        return self._requests.pages(self._list_objects, params)
