"""What only the GCS adapter does: URLs, key prefixes, throttling, refusals, layout."""

import json
import urllib.request
import uuid
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from urllib.parse import quote

import pytest
from tenchi.errors import AppError

from app.features.memory.ports import Change, FileMetadata, Storage, Write
from app.infra.gcs.history import generation_of, is_tracked
from app.infra.gcs.location import GcsLocation, parse_gcs_url
from app.infra.gcs.requests import GcsRefusedError
from app.infra.gcs.resources import ObjectResource
from app.infra.gcs.storage import open_gcs_storage
from app.server.settings import SettingsError, load_settings
from app.shared.errors import backend_unavailable, invalid_argument
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator

KEY = "user/alice/notes/tea.md"
META = FileMetadata(
    "Tea", ("chá",), ("http",), datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
)


def fresh_url(options: str = "timeout=5&attempts=3") -> str:
    return f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}?{options}"


@pytest.fixture
async def storage(gcs_emulator: GcsEmulator) -> AsyncGenerator[Storage]:
    async with open_gcs_storage(fresh_url()) as opened:
        yield opened


def test_a_gcs_url_names_bucket_prefix_and_options() -> None:
    """The path is a key prefix inside the bucket; the query sets timeout and tries."""
    assert parse_gcs_url("gcs://acme/prod/eu/?timeout=2.5&attempts=5") == GcsLocation(
        "acme", "prod/eu/", 2.5, 5
    )
    assert parse_gcs_url("gcs://acme") == GcsLocation("acme")


@pytest.mark.parametrize(
    "url",
    [
        "gcs://",
        "gcs:///prefix",
        "gcs://b?timeout=0",
        "gcs://b?timeout=soon",
        "gcs://b?attempts=0",
        "gcs://b?retries=2",
    ],
)
def test_a_malformed_gcs_url_stops_startup_with_a_correct_spelling(url: str) -> None:
    """Settings name WENCHANG_STORAGE and show how to write the URL."""
    with pytest.raises(SettingsError) as raised:
        load_settings(storage=url)

    assert "WENCHANG_STORAGE" in str(raised.value)
    assert "gcs://" in str(raised.value)


@pytest.mark.parametrize(
    "url", ["gcs://acme", "gcs://acme/prefix?timeout=3", "file:///var/lib/wenchang"]
)
def test_settings_accept_gcs_and_file_storage_urls(url: str) -> None:
    """The new backends are valid values of WENCHANG_STORAGE."""
    assert load_settings(storage=url).storage == url


def test_a_version_is_a_generation_only_within_gcs_s_int64_range() -> None:
    """GCS numbers generations as positive 64-bit integers: the largest is a
    generation, one more is not (GCS would refuse it with a 400, an internal error
    to the caller), nor is anything but a decimal number without a leading zero."""
    largest = str(2**63 - 1)
    assert generation_of(largest) == largest
    assert generation_of("1") == "1"
    for version in (str(2**63), "0", "01", "-1", "1.0", " 1", "x", ""):
        assert generation_of(version) is None, version


def test_an_object_is_tracked_only_with_both_its_operation_and_actor() -> None:
    """A record needs both (``record_of`` reads both): an object carrying one
    alone, which no write of the adapter leaves but another tool could, counts
    as written without a change, as one without metadata does."""

    def resource(metadata: dict[str, str]) -> ObjectResource:
        return {"name": KEY, "generation": "1", "metadata": metadata}

    assert is_tracked(resource({"operation": "write_file", "actor": "a"}))
    for metadata in ({"operation": "write_file"}, {"actor": "a"}, {}):
        assert not is_tracked(resource(metadata)), metadata
    assert not is_tracked({"name": KEY, "generation": "1"})


async def test_a_key_prefix_keeps_deployments_in_one_bucket_apart(
    gcs_emulator: GcsEmulator,
) -> None:
    """Two prefixes of one bucket never see each other's objects."""
    async with (
        open_gcs_storage(fresh_url()) as first,
        open_gcs_storage(fresh_url()) as second,
    ):
        await first.put(Write(KEY, b"first", META))

        assert await second.get(KEY) is None
        assert await second.list_page("", start_after=None, limit=10) == []
        assert await second.count("") == 0
        assert await first.count("") == 1


async def test_objects_use_the_wenchang_library_layout(
    gcs_emulator: GcsEmulator,
) -> None:
    """Object name = prefix + key; library metadata keys, JSON arrays, markdown."""
    url = fresh_url()
    async with open_gcs_storage(url) as storage:
        version = await storage.put(Write(KEY, b"- [stated] x\n", META))
    name = quote(parse_gcs_url(url).prefix + KEY, safe="")

    with urllib.request.urlopen(
        f"{gcs_emulator.url}/storage/v1/b/{TEST_BUCKET}/o/{name}", timeout=10
    ) as response:
        raw = json.loads(response.read())

    assert raw["generation"] == version
    assert raw["contentType"] == "text/markdown; charset=utf-8"
    assert raw["metadata"] == {
        "description": "Tea",
        "aliases": '["ch\\u00e1"]',
        "sources": '["http"]',
        "last-updated": "2026-01-02T03:04:05Z",
    }


async def test_a_throttled_write_is_retried_and_lands(
    storage: Storage, gcs_emulator: GcsEmulator
) -> None:
    """One 429 (GCS's one-write-per-second limit) is absorbed by a retry."""
    version = await storage.put(Write(KEY, b"before", META))
    gcs_emulator.proxy.throttle(1)

    written = await storage.put_if_version(Write(KEY, b"after", META), version)

    stored = await storage.get(KEY)
    assert written is not None and stored is not None
    assert (stored.data, stored.version) == (b"after", written)


async def test_persistent_throttling_is_503_and_writes_nothing(
    storage: Storage, gcs_emulator: GcsEmulator
) -> None:
    """429s are retried until the deadline, then BackendUnavailable(timeout)
    with Retry-After; the object is untouched."""
    version = await storage.put(Write(KEY, b"before", META))
    gcs_emulator.proxy.throttle(10**6)

    try:
        with pytest.raises(AppError) as raised:
            await storage.put_if_version(Write(KEY, b"after", META), version)
    finally:
        gcs_emulator.proxy.throttle(0)

    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "timeout"
    assert raised.value.headers["Retry-After"] == "1"
    assert gcs_emulator.proxy.rate_limited > 2  # more tries than the attempts
    stored = await storage.get(KEY)
    assert stored is not None and (stored.data, stored.version) == (b"before", version)


async def test_a_missing_bucket_is_a_refusal_not_an_outage(
    gcs_emulator: GcsEmulator,
) -> None:
    """A wrong bucket name cannot be fixed by retrying: writes, lists, ping refuse."""
    async with open_gcs_storage(f"gcs://no-such-{uuid.uuid4().hex}") as storage:
        for call in (
            storage.put(Write(KEY, b"x", META)),
            storage.list_page("", start_after=None, limit=5),
            storage.ping(),
        ):
            with pytest.raises(GcsRefusedError, match=r"roles/storage\.objectUser"):
                await call


async def test_names_with_slashes_percent_and_unicode_are_encoded_in_urls(
    storage: Storage,
) -> None:
    """A key is one object name, whatever characters its name holds."""
    key = f"user/alice/notes/{quote('a%2Fb')} ?#&=茶.md"

    version = await storage.put_if_version(Write(key, b"odd", META), None)
    deleted = await storage.delete_if_version(key, version or "")

    assert version is not None and deleted
    assert await storage.get(key) is None


async def test_a_key_too_long_for_its_archive_names_is_refused_by_every_write(
    storage: Storage,
) -> None:
    """Its archived records would need an object name over 1,024 bytes: an
    unconditional put refuses it as a guarded one does, naming ``name`` and by
    how many bytes, and stores nothing."""
    key = "user/alice/notes/" + "x" * 1000 + ".md"
    prefix = parse_gcs_url(fresh_url()).prefix  # every fresh prefix is as long
    archived = f"{prefix}\\history/{key}\\" + "0" * 19
    over = len(archived.encode()) - 1024
    for write in (
        storage.put(Write(key, b"x", META)),
        storage.put_if_version(Write(key, b"x", META), None),
    ):
        with pytest.raises(AppError) as raised:
            await write
        assert raised.value.definition is invalid_argument
        assert raised.value.details["argument"] == "name"
        assert raised.value.message.startswith(
            f"Argument name is invalid: {over} bytes of UTF-8 too long for GCS"
            " storage (object names: 1024)."
        )
    assert await storage.count("user/alice/") == 0


async def test_a_listing_from_the_prefix_root_shows_files_only(
    storage: Storage,
) -> None:
    """History, the change log and a delete's records share the prefix with the
    files: a listing or count of every key shows and counts the files alone."""
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    first = await storage.put_if_version(
        Write(KEY, b"one\n", META, change=Change("write_file", "a", at)), None
    )
    assert first is not None
    again = Write(KEY, b"two\n", META, change=Change("append_line", "a", at))
    assert await storage.put_if_version(again, first) is not None
    gone = "user/bob/notes/x.md"
    made = Write(gone, b"x\n", META, change=Change("write_file", "b", at))
    version = await storage.put_if_version(made, None)
    deleted = Change("delete_file", "b", at)
    assert await storage.delete_if_version(gone, version or "", change=deleted)

    page = await storage.list_page("", start_after=None, limit=10)

    assert [item.key for item in page] == [KEY]
    assert await storage.count("") == 1
