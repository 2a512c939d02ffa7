"""What ``GcsObjects`` asks of the GCS client, and how it reads the answers
(no emulator).

Each request names the bucket and the object, gives each attempt the call's
whole deadline (the library's own default would cut a longer one short),
and turns 404 / 412 into plain outcomes. A stand-in for the gcloud-aio client
records each call and answers with the statuses a test scripts.
"""

import math
from typing import Any

import aiohttp
import pytest
from tenchi.errors import AppError

from app.infra.gcs.client import GcsClient
from app.infra.gcs.location import GcsLocation
from app.infra.gcs.objects import CONTENT_TYPE, GcsObjects
from app.infra.gcs.requests import GcsRefusedError, OutcomeUnknown
from app.shared.errors import backend_unavailable

BUCKET = "b"
NAME = "t/user/alice/notes/tea.md"
DEADLINE = 2.5
ATTEMPT = math.ceil(DEADLINE)


def refused(status: int) -> aiohttp.ClientResponseError:
    return aiohttp.ClientResponseError(None, (), status=status)  # type: ignore[arg-type]


class Client:
    """Answers each call with the next of ``statuses`` (then ``answer``)."""

    def __init__(self, answer: Any = None, statuses: tuple[int, ...] = ()) -> None:
        self.answer = answer
        self.statuses = list(statuses)
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def _answer(self, call: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.calls.append((call, args, kwargs))
        if self.statuses:
            raise refused(self.statuses.pop(0))
        return self.answer

    async def upload(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("upload", args, kwargs)

    async def download_metadata(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("describe", args, kwargs)

    async def download_generation(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("download", args, kwargs)

    async def delete(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("delete", args, kwargs)

    async def list_objects(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("list", args, kwargs)


def objects(client: Client, attempts: int = 2) -> GcsObjects:
    stand_in: GcsClient = client  # type: ignore[assignment]
    return GcsObjects(stand_in, GcsLocation(BUCKET, "t/", DEADLINE, attempts))


async def test_an_upload_sends_body_metadata_and_its_precondition() -> None:
    client = Client({"name": NAME, "generation": 12})
    store = objects(client)
    assert store.bucket == BUCKET

    assert await store.upload(NAME, b"x", {"k": "v"}, "5") == "12"
    assert await store.upload(NAME, b"y", {}, None) == "12"

    sent: dict[str, object] = {
        "content_type": CONTENT_TYPE,
        "parameters": {"ifGenerationMatch": "5"},
        "metadata": {"metadata": {"k": "v"}},
        "timeout": ATTEMPT,
    }
    assert client.calls[0] == ("upload", (BUCKET, NAME, b"x"), sent)
    nothing: dict[str, str] = {}
    unconditional = sent | {"parameters": nothing, "metadata": {"metadata": nothing}}
    assert client.calls[1] == ("upload", (BUCKET, NAME, b"y"), unconditional)


async def test_an_upload_whose_precondition_failed_answers_none() -> None:
    store = objects(Client(statuses=(412,)))
    assert await store.upload(NAME, b"x", {}, "5") is None


async def test_only_a_conditional_upload_left_in_doubt_is_an_unknown_outcome() -> None:
    """An unanswered attempt of a conditional upload may have landed: the
    caller must look (OutcomeUnknown); an unconditional one is repeated, and
    when every attempt fails it is plainly unavailable."""
    with pytest.raises(OutcomeUnknown):
        await objects(Client(statuses=(503, 503))).upload(NAME, b"x", {}, "5")
    with pytest.raises(AppError) as raised:
        await objects(Client(statuses=(503, 503))).upload(NAME, b"x", {}, None)
    assert raised.value.definition is backend_unavailable


async def test_describe_and_download_answer_none_for_a_missing_object() -> None:
    client = Client({"name": NAME, "generation": "3"})
    store = objects(client)
    assert await store.describe(NAME) == {"name": NAME, "generation": "3"}
    client.answer = b"body"
    assert await store.download(NAME, "3") == b"body"
    assert client.calls == [
        ("describe", (BUCKET, NAME), {"timeout": ATTEMPT}),
        ("download", (BUCKET, NAME, "3"), {"timeout": ATTEMPT}),
    ]

    assert await objects(Client(statuses=(404,))).describe(NAME) is None
    assert await objects(Client(statuses=(404,))).download(NAME, "3") is None


async def test_a_delete_answers_whether_it_removed_the_object() -> None:
    client = Client({})
    params = {"ifGenerationMatch": "3"}
    assert await objects(client).delete(NAME, params) is True
    assert client.calls == [
        ("delete", (BUCKET, NAME), {"params": params, "timeout": ATTEMPT})
    ]
    for status in (404, 412):
        assert await objects(Client(statuses=(status,))).delete(NAME, {}) is False


async def test_an_erase_removes_one_generation_and_passes_an_outage_on() -> None:
    client = Client({})
    await objects(client).erase(NAME, "3")
    await objects(Client(statuses=(404,))).erase(NAME, "3")  # gone already
    assert client.calls == [
        ("delete", (BUCKET, NAME), {"params": {"generation": "3"}, "timeout": ATTEMPT})
    ]
    with pytest.raises(AppError) as raised:
        await objects(Client(statuses=(503, 503))).erase(NAME, "3")
    assert raised.value.definition is backend_unavailable


async def test_a_listing_is_read_by_page_and_by_item() -> None:
    page = {"items": [{"name": NAME, "generation": "1"}]}
    client = Client(page)
    store = objects(client)
    assert await store.list({"prefix": "t/"}) == page
    assert [item async for item in store.items({"prefix": "t/"})] == page["items"]
    listed = ("list", (BUCKET,), {"params": {"prefix": "t/"}, "timeout": ATTEMPT})
    assert client.calls == [listed, listed]


async def test_a_refusal_names_the_bucket() -> None:
    """An operator reads which bucket refused (a 403: credentials, IAM)."""
    with pytest.raises(GcsRefusedError, match=f"for bucket {BUCKET} "):
        await objects(Client(statuses=(403,))).describe(NAME)
