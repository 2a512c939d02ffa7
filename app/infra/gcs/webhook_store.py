"""Webhook endpoints in the bucket: one JSON object per endpoint, its generation
its version.

``.webhooks/<scope>/<entity>/<id>.json`` under the storage's prefix (outside
every entity's keys). Each swap is an upload with ``ifGenerationMatch``, so
replicas on the bucket take leases and advance cursors one at a time.
"""

import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import aiohttp

from app.features.webhooks.domain import Endpoint, Stored
from app.infra.gcs.client import GcsClient
from app.infra.gcs.location import parse_gcs_url
from app.infra.gcs.objects import GcsObjects
from app.infra.webhook_records import endpoint_json, endpoint_of

DIRECTORY = ".webhooks/"
ABSENT = "0"
_ID = re.compile(r"^wh_[0-9a-f]{24}$")


class GcsWebhookStore:
    def __init__(self, objects: GcsObjects, prefix: str) -> None:
        self._objects = objects
        self._root = prefix + DIRECTORY

    def _name(self, prefix: str, endpoint_id: str) -> str:
        return f"{self._root}{prefix}{endpoint_id}.json"

    async def create(self, endpoint: Endpoint) -> None:
        name = self._name(endpoint.prefix, endpoint.id)
        await self._objects.upload(name, endpoint_json(endpoint), {}, ABSENT)

    async def listing(self, prefix: str | None) -> list[Stored]:
        params = {"prefix": self._root + (prefix or "")}
        found: list[Stored] = []
        async for item in self._objects.items(params):
            body = await self._objects.download(
                str(item["name"]), str(item["generation"])
            )
            if body is not None:  # replaced or removed since it was listed
                found.append(Stored(endpoint_of(body), str(item["generation"])))
        return sorted(found, key=lambda stored: stored.endpoint.id)

    async def swap(self, endpoint: Endpoint, expected: str) -> str | None:
        name = self._name(endpoint.prefix, endpoint.id)
        return await self._objects.upload(name, endpoint_json(endpoint), {}, expected)

    async def remove(self, prefix: str, endpoint_id: str) -> bool:
        if not _ID.match(endpoint_id):
            return False
        name = self._name(prefix, endpoint_id)
        described = await self._objects.describe(name)
        if described is None:
            return False
        return await self._objects.delete(name, {})

    async def erase(self, prefix: str) -> None:
        async for item in self._objects.items({"prefix": self._root + prefix}):
            await self._objects.erase(str(item["name"]), str(item["generation"]))


@asynccontextmanager
async def open_gcs_webhook_store(url: str) -> AsyncGenerator[GcsWebhookStore]:
    """The store for the storage at ``url``, with its own HTTP session."""
    location = parse_gcs_url(url)
    timeout = aiohttp.ClientTimeout(total=location.timeout)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        objects = GcsObjects(GcsClient(session=session), location)
        yield GcsWebhookStore(objects, location.prefix)
