"""The GCS JSON API client of the storage adapter (imported only with it)."""

from gcloud.aio.storage import Storage as AioStorage


class GcsClient(AioStorage):
    """gcloud-aio's client plus a download pinned to one generation."""

    async def download_generation(
        self, bucket: str, name: str, generation: str, *, timeout: int
    ) -> bytes:
        # Pinning the generation makes the body and the metadata read before it
        # come from one write; a newer write turns this into a 404.
        return await self._download(
            bucket,
            name,
            params={"alt": "media", "generation": generation},
            timeout=timeout,
        )
