"""What the GCS webhook store asks of the bucket (no emulator).

fake-gcs-server deletes the live object whatever ``generation`` a DELETE
names, so the emulator cannot show that an entity's erase names each
listed object's own generation; a stand-in for ``GcsObjects`` records it.
"""

from collections.abc import AsyncGenerator

from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.resources import ObjectResource
from app.infra.gcs.webhook_store import GcsWebhookStore

ROOT = "t/.webhooks/"


class Objects:
    def __init__(self, listed: list[ObjectResource]) -> None:
        self.listed = listed
        self.asked: list[dict[str, str]] = []
        self.erased: list[tuple[str, str]] = []

    async def items(self, params: dict[str, str]) -> AsyncGenerator[ObjectResource]:
        self.asked.append(params)
        for item in self.listed:
            yield item

    async def erase(self, name: str, generation: str) -> None:
        self.erased.append((name, generation))


async def test_an_erase_removes_each_listed_generation_of_its_entity() -> None:
    names = [f"{ROOT}user/alice/wh_{n:024x}.json" for n in (1, 2)]
    objects = Objects([{"name": names[0], "generation": "11"}])
    objects.listed.append({"name": names[1], "generation": "12"})
    stand_in: GcsObjects = objects  # type: ignore[assignment]

    await GcsWebhookStore(stand_in, "t/").erase("user/alice/")

    assert objects.asked == [{"prefix": ROOT + "user/alice/"}]
    assert objects.erased == [(names[0], "11"), (names[1], "12")]
