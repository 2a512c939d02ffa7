"""The GCS JSON API client of the storage adapter (imported only with it)."""

from urllib.parse import quote

from gcloud.aio.storage import Storage as AioStorage
from gcloud.aio.storage.storage import init_api_root


class GcsClient(AioStorage):
    """gcloud-aio's client plus a download pinned to one generation."""

    async def download_generation(
        self, bucket: str, name: str, generation: str, *, timeout: int
    ) -> bytes:
        # Pinning the generation makes the body and the metadata read before it
        # come from one write; a newer write turns this into a 404. gcloud-aio's
        # public download takes no query, so this is the same GET through its
        # public session and token (the emulator host as it resolves it).
        is_dev, root = init_api_root(None)
        url = f"{root}/storage/v1/b/{quote(bucket, safe='')}/o/{quote(name, safe='')}"
        headers = (
            {} if is_dev else {"Authorization": f"Bearer {await self.token.get()}"}
        )
        response = await self.session.get(
            url,
            headers=headers,
            timeout=timeout,
            params={"alt": "media", "generation": generation},
        )
        body: bytes = await response.read()
        return body
