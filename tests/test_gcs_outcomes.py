"""How a conditional upload whose answer went missing is resolved (no emulator).

``GcsWrites`` looks at the object and, for a tracked write, at the key's
archive (newest first): our write id (or, untracked, our body and metadata)
there means the write landed at that version; the archive reaching the
version ours was conditioned on without it means ours never can land (None);
anything else is an outcome unknown. A stand-in for ``GcsObjects`` scripts
what GCS holds, so each case is exact and needs no emulator.
"""

import asyncio
import base64
import hashlib
from collections.abc import AsyncGenerator

import pytest
from tenchi.errors import AppError

from app.features.memory.ports import HistoryRetention
from app.infra.gcs.history import OPERATION, VERSION, GcsHistory
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.outcomes import WRITE, GcsWrites
from app.infra.gcs.requests import OutcomeUnknown
from app.infra.gcs.resources import ObjectResource
from app.shared.errors import backend_unavailable

PREFIX = "t/"
KEY = "user/alice/notes/tea.md"
NAME = PREFIX + KEY
BODY = b"- [stated] Likes tea.\n"
TRACKED = {"description": "tea", OPERATION: "write_file", "actor": "alice"}
UNTRACKED = {"description": "tea"}


def md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


class Bucket:
    """What GCS holds of one key: its live object and its archive, newest
    first; every upload's answer is lost (``OutcomeUnknown``)."""

    def __init__(self) -> None:
        self.live: ObjectResource | None = None
        self.archive: list[ObjectResource] = []
        self.sent: list[tuple[str, bytes, dict[str, str], str | None]] = []
        self.described: list[str] = []
        self.listed: list[dict[str, str]] = []
        self.hang = False

    async def upload(
        self, name: str, data: bytes, metadata: dict[str, str], generation: str | None
    ) -> str | None:
        self.sent.append((name, data, metadata, generation))
        raise OutcomeUnknown(None)

    async def describe(self, name: str) -> ObjectResource | None:
        self.described.append(name)
        if self.hang:
            await asyncio.Event().wait()
        return self.live if name == NAME else None

    async def items(self, params: dict[str, str]) -> AsyncGenerator[ObjectResource]:
        self.listed.append(params)
        for item in self.archive:
            if item["name"].startswith(params["prefix"]):
                yield item

    @property
    def ours(self) -> dict[str, str]:
        """The metadata our (only) upload sent."""
        return self.sent[-1][2]


def writes(bucket: Bucket, budget: float = 5.0) -> GcsWrites:
    objects: GcsObjects = bucket  # type: ignore[assignment]
    history = GcsHistory(objects, PREFIX, HistoryRetention())
    return GcsWrites(objects, history, PREFIX, budget)


def archived(
    generation: str, values: dict[str, str], *, key: str = KEY
) -> ObjectResource:
    """An archive record of ``key``'s version ``values[VERSION]``, stored as
    object generation ``generation``."""
    name = f"{PREFIX}\\history/{key}\\{generation}"
    return {"name": name, "generation": generation, "metadata": values}


async def outcome_unknown(call: "asyncio.Future[str | None] | object") -> AppError:
    with pytest.raises(AppError) as raised:
        await call  # type: ignore[misc]
    assert raised.value.definition is backend_unavailable
    assert raised.value.details["outcome"] == "unknown"
    return raised.value


class Landing(Bucket):
    """Our upload lands (unanswered) at generation 7."""

    async def upload(
        self, name: str, data: bytes, metadata: dict[str, str], generation: str | None
    ) -> str | None:
        self.sent.append((name, data, metadata, generation))
        landed: ObjectResource = {
            "name": name,
            "generation": "7",
            "metadata": dict(metadata),
            "md5Hash": md5(data),
        }
        self.live = landed
        raise OutcomeUnknown(None)


async def test_a_tracked_write_carries_a_fresh_write_id_or_its_claims() -> None:
    """The object's name is the prefix and key; a tracked write without a
    write id gets a fresh one, a claim's id is kept, an untracked write's
    metadata is sent as given."""
    bucket = Landing()
    assert await writes(bucket).upload(KEY, BODY, TRACKED, "5") == "7"
    name, data, sent, generation = bucket.sent[-1]
    assert (name, data, generation) == (NAME, BODY, "5")
    assert sent.keys() == TRACKED.keys() | {WRITE}
    assert len(sent[WRITE]) == 32 and int(sent[WRITE], 16) >= 0
    assert bucket.described == [NAME]

    claimed = TRACKED | {WRITE: "claim-1"}
    assert await writes(bucket).upload(KEY, BODY, claimed, "5") == "7"
    assert bucket.ours == claimed

    assert await writes(bucket).upload(KEY, BODY, UNTRACKED, "5") == "7"
    assert bucket.ours == UNTRACKED


async def test_an_untracked_write_is_ours_only_with_our_body_and_metadata() -> None:
    """An untracked write is recognised by its body's MD5 and its metadata:
    the same metadata over another body is another write's."""
    bucket = Bucket()
    bucket.live = {
        "name": NAME,
        "generation": "9",
        "metadata": dict(UNTRACKED),
        "md5Hash": md5(b"another body"),
    }
    bucket.archive = [archived("1", {VERSION: "7", WRITE: "w"})]
    await outcome_unknown(writes(bucket).upload(KEY, BODY, UNTRACKED, "5"))
    assert bucket.listed == []  # an untracked write is never looked for there

    bucket.live = {"name": NAME, "generation": "9", "md5Hash": md5(BODY)}
    await outcome_unknown(writes(bucket).upload(KEY, BODY, UNTRACKED, "5"))


async def test_a_tracked_write_replaced_since_is_found_in_the_archive() -> None:
    """Ours landed at 7, then two writes replaced it (8, then 9): the archive,
    newest first, holds 8's record, then ours, then 5's; ours is the answer,
    the version its record names (not the record object's generation)."""
    bucket = Bucket()
    bucket.live = {"name": NAME, "generation": "9", "metadata": {WRITE: "b"}}
    bucket.archive = [
        archived("100", {VERSION: "8", WRITE: "a"}),
        archived("101", {VERSION: "7", WRITE: "ours"}),
        archived("102", {VERSION: "5", WRITE: "older"}),
    ]
    found = await writes(bucket).upload(KEY, BODY, TRACKED | {WRITE: "ours"}, "5")
    assert found == "7"
    # the archive of exactly this key, each record's version and write id,
    # and the token of the next page
    fields = "items(name,generation,metadata),nextPageToken"
    assert bucket.listed == [{"prefix": f"{PREFIX}\\history/{KEY}\\", "fields": fields}]


async def test_an_archived_record_without_its_version_names_its_generation() -> None:
    bucket = Bucket()
    bucket.live = {"name": NAME, "generation": "9", "metadata": {WRITE: "b"}}
    bucket.archive = [archived("101", {WRITE: "ours"})]
    found = await writes(bucket).upload(KEY, BODY, TRACKED | {WRITE: "ours"}, "5")
    assert found == "101"


async def test_a_tracked_write_the_archive_reaches_past_never_landed() -> None:
    """Another write replaced 5 (its record archived) and ours is not above
    it: ours failed its precondition (None, never a guess)."""
    bucket = Bucket()
    bucket.live = {"name": NAME, "generation": "9", "metadata": {WRITE: "b"}}
    bucket.archive = [
        archived("100", {VERSION: "8", WRITE: "a"}),
        archived("101", {VERSION: "5", WRITE: "older"}),
        archived("102", {VERSION: "3", WRITE: "ours"}),  # below 5: never ours
    ]
    assert (
        await writes(bucket).upload(KEY, BODY, TRACKED | {WRITE: "ours"}, "5") is None
    )


async def test_a_tracked_write_whose_archive_ends_early_is_an_unknown_outcome() -> None:
    """Ours was conditioned on 5 but the archive (pruned, say) reaches
    neither ours nor 5: nothing proves either way."""
    bucket = Bucket()
    bucket.live = {"name": NAME, "generation": "9", "metadata": {WRITE: "b"}}
    bucket.archive = [archived("100", {VERSION: "8", WRITE: "a"})]
    await outcome_unknown(writes(bucket).upload(KEY, BODY, TRACKED | {WRITE: "o"}, "5"))


async def test_an_object_still_at_our_precondition_is_an_unknown_outcome() -> None:
    """Ours may still land (its attempt is in flight): never a conflict, even
    with the replaced version's record archived already."""
    bucket = Bucket()
    bucket.live = {"name": NAME, "generation": "5", "metadata": {WRITE: "b"}}
    bucket.archive = [archived("100", {VERSION: "5", WRITE: "b"})]
    await outcome_unknown(writes(bucket).upload(KEY, BODY, TRACKED | {WRITE: "o"}, "5"))

    absent = Bucket()  # a create whose key is still absent
    await outcome_unknown(writes(absent).upload(KEY, BODY, TRACKED | {WRITE: "o"}, "0"))


async def test_a_create_that_lost_to_another_create_did_not_land() -> None:
    """The key holds another write and the archive holds no write of ours:
    ours would have been archived before anything replaced it, so it never
    landed (an untracked create cannot tell: unknown)."""
    bucket = Bucket()
    bucket.live = {"name": NAME, "generation": "9", "metadata": {WRITE: "b"}}
    assert await writes(bucket).upload(KEY, BODY, TRACKED | {WRITE: "o"}, "0") is None
    await outcome_unknown(writes(bucket).upload(KEY, BODY, UNTRACKED, "0"))


async def test_a_check_that_gets_no_answer_gives_up_within_its_budget() -> None:
    """The check's own budget bounds it: an outcome unknown, not a hang."""
    bucket = Bucket()
    bucket.hang = True
    async with asyncio.timeout(5):
        await outcome_unknown(
            writes(bucket, budget=0.05).upload(KEY, BODY, TRACKED, "5")
        )
