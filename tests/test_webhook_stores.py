"""Every webhook store (memory, SQLite, files, GCS) keeps endpoints alike.

docs/changes.md: endpoints and their delivery state are kept beside the memory
in the storage (a restarted process finds them), each change of one is a
version-guarded swap (of two swaps from one version, one wins: leases and
cursors never move twice), and a purge of an entity removes only its own.
"""

import asyncio
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.features.webhooks.domain import Endpoint
from app.features.webhooks.domain.signing import new_endpoint_id, new_secret
from app.features.webhooks.ports import WebhookStore
from app.infra.port_wiring import open_webhook_store
from app.infra.sqlite.webhook_store import SqliteWebhookStore
from tests.support.storage_adapters import ADAPTERS, storage_url

NOW = datetime(2026, 12, 5, 6, 0, 0, 123456, tzinfo=UTC)


def endpoint(entity: str = "alice") -> Endpoint:
    return Endpoint(
        id=new_endpoint_id(),
        scope="user",
        entity_id=entity,
        url="https://hooks.example.com/a",
        description="ci",
        secret=new_secret(),
        created_at=NOW,
        cursor=3,
    )


@pytest.fixture(params=ADAPTERS)
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncGenerator[str]:
    kind: str = request.param
    if kind == "gcs":
        request.getfixturevalue("gcs_emulator")
    yield storage_url(kind, tmp_path)


@pytest.fixture
async def store(url: str) -> AsyncGenerator[WebhookStore]:
    async with open_webhook_store(url) as opened:
        yield opened


async def test_an_endpoint_is_listed_by_its_entity_with_every_field(
    store: WebhookStore,
) -> None:
    alice, bob = endpoint(), endpoint("bob")
    await store.create(alice)
    await store.create(bob)
    assert [s.endpoint for s in await store.listing("user/alice/")] == [alice]
    assert {s.endpoint.id for s in await store.listing(None)} == {alice.id, bob.id}


async def test_of_two_swaps_from_one_version_exactly_one_lands(
    store: WebhookStore,
) -> None:
    first = endpoint()
    await store.create(first)
    [stored] = await store.listing("user/alice/")
    one = replace(first, lease_holder="one", lease_until=NOW)
    two = replace(first, lease_holder="two", lease_until=NOW)
    landed = await asyncio.gather(
        store.swap(one, stored.version), store.swap(two, stored.version)
    )
    assert sum(version is not None for version in landed) == 1
    [now] = await store.listing("user/alice/")
    assert now.endpoint.lease_holder in ("one", "two")
    assert await store.swap(replace(first, cursor=9), stored.version) is None
    moved = replace(now.endpoint, cursor=9, failed_at=NOW)
    assert await store.swap(moved, now.version) is not None
    assert (await store.listing("user/alice/"))[0].endpoint == moved


async def test_a_swap_answers_the_version_the_next_swap_expects(
    store: WebhookStore,
) -> None:
    """A delivery round takes the lease, then moves the cursor from the version
    its swap answered, without listing the endpoint again."""
    first = endpoint()
    await store.create(first)
    [stored] = await store.listing("user/alice/")
    leased = replace(first, lease_holder="one", lease_until=NOW)
    version = await store.swap(leased, stored.version)
    assert version is not None
    assert [s.version for s in await store.listing("user/alice/")] == [version]

    advanced = replace(leased, cursor=9)
    again = await store.swap(advanced, version)

    assert again is not None and again not in (version, stored.version)
    [now] = await store.listing("user/alice/")
    assert (now.endpoint, now.version) == (advanced, again)


async def test_remove_and_erase_touch_only_their_entity(store: WebhookStore) -> None:
    alice, other, bob = endpoint(), endpoint(), endpoint("bob")
    for item in (alice, other, bob):
        await store.create(item)
    assert not await store.remove("user/bob/", alice.id)
    assert not await store.remove("user/alice/", "../../etc/passwd")
    assert await store.remove("user/alice/", alice.id)
    assert not await store.remove("user/alice/", alice.id)
    await store.erase("user/alice/")
    assert [s.endpoint.id for s in await store.listing(None)] == [bob.id]


async def test_another_process_on_the_storage_finds_them(url: str) -> None:
    if url == "memory://":
        pytest.skip("memory:// keeps endpoints in its process only")
    item = endpoint()
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(open_webhook_store(url))
        await first.create(item)
        second = await stack.enter_async_context(open_webhook_store(url))
        [found] = await second.listing("user/alice/")
        assert found.endpoint == item
        assert await second.swap(replace(item, cursor=4), found.version) is not None
        assert (await first.listing(None))[0].endpoint.cursor == 4


async def test_a_sqlite_store_closed_twice_opens_again_when_used(
    tmp_path: Path,
) -> None:
    """Closing is safe to repeat, and a closed store reconnects on its next call."""
    store = SqliteWebhookStore(tmp_path / "wenchang.db")
    alice = endpoint()
    await store.create(alice)
    store.close()
    store.close()

    assert [s.endpoint for s in await store.listing("user/alice/")] == [alice]
    store.close()


async def test_a_remove_that_finds_nothing_answers_false(store: WebhookStore) -> None:
    """False, not merely falsy, on a store that never held an endpoint and on
    one that holds others."""
    assert await store.remove("user/alice/", new_endpoint_id()) is False
    await store.create(endpoint())
    assert await store.remove("user/alice/", new_endpoint_id()) is False


async def test_a_swap_of_an_endpoint_the_store_never_held_lands_nowhere(
    store: WebhookStore,
) -> None:
    """Neither an id of the issued form nor any other text names a record."""
    held = endpoint()
    await store.create(held)
    never = endpoint()
    assert await store.swap(never, "1") is None
    assert await store.swap(replace(never, id="not-an-id"), "1") is None
    assert [s.endpoint for s in await store.listing(None)] == [held]


async def test_endpoint_files_are_private_and_other_files_are_ignored(
    tmp_path: Path,
) -> None:
    """The file store keeps each endpoint (its secret included) readable by
    its owner only, and lists only the documents it names ``wh_….json``."""
    async with open_webhook_store(storage_url("file", tmp_path)) as store:
        held = endpoint()
        await store.create(held)
        directory = tmp_path / "files" / ".webhooks"
        [document] = directory.glob("wh_*.json")
        assert document.stat().st_mode & 0o777 == 0o600
        (directory / "notes.json").write_text("{}")
        (directory / f"{held.id}.json.bak").write_text("{}")
        assert [s.endpoint for s in await store.listing(None)] == [held]
