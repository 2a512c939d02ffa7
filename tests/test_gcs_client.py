"""``GcsClient.download_generation``: the body of exactly the generation asked for."""

import uuid

import aiohttp
import pytest

from app.infra.gcs.client import GcsClient
from tests.support.gcs_emulator import GcsEmulator


async def test_a_download_is_pinned_to_its_generation(
    gcs_emulator: GcsEmulator,
) -> None:
    """An older generation reads back as it was, not as the live object; once
    gone (no versioning), it is a 404, never the newer body."""
    versioned, plain = (f"pin-{uuid.uuid4().hex[:12]}" for _ in range(2))
    gcs_emulator.create_bucket(versioned, versioned=True)
    gcs_emulator.create_bucket(plain)
    name = "t/user/alice/notes/tea.md"
    async with aiohttp.ClientSession() as session:
        client = GcsClient(session=session)
        for bucket in (versioned, plain):
            first = await client.upload(bucket, name, b"one\n", timeout=10)
            await client.upload(bucket, name, b"two\n", timeout=10)
            generation = str(first["generation"])

            if bucket == versioned:
                body = await client.download_generation(
                    bucket, name, generation, timeout=10
                )
                assert body == b"one\n"
            else:
                with pytest.raises(aiohttp.ClientResponseError) as gone:
                    await client.download_generation(
                        bucket, name, generation, timeout=10
                    )
                assert gone.value.status == 404
