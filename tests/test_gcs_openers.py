"""The GCS openers (``open_gcs_storage``, ``open_gcs_webhook_store``): each
opens an HTTP session of its own, bounded by its URL's ``timeout``, hands it to
gcloud-aio, and closes it on exit. No request is made, so no emulator."""

import aiohttp

from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.storage import open_gcs_storage
from app.infra.gcs.webhook_store import open_gcs_webhook_store

URL = "gcs://bucket/pre?timeout=7"


def session_of(objects: GcsObjects) -> aiohttp.ClientSession:
    assert objects.bucket == "bucket"
    client = objects._client  # pyright: ignore[reportPrivateUsage]
    session = client.session.session
    assert isinstance(session, aiohttp.ClientSession)
    assert not session.closed
    return session


async def test_storage_s_session_is_bounded_by_its_url_and_closed_on_exit() -> None:
    async with open_gcs_storage(URL) as storage:
        session = session_of(storage._objects)  # pyright: ignore[reportPrivateUsage]
        assert session.timeout.total == 7

    assert session.closed


async def test_the_webhook_store_s_session_is_bounded_and_closed_alike() -> None:
    async with open_gcs_webhook_store(URL) as store:
        session = session_of(store._objects)  # pyright: ignore[reportPrivateUsage]
        assert session.timeout.total == 7

    assert session.closed
