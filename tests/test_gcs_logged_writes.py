"""One recorded write's change-log entry on GCS, claimed and settled (no emulator).

``LoggedWrite`` claims a number above the version its mutation replaces,
keeps that claim while it stays above what the write meets, and settles it
once: landed at the version made, or void. A stand-in for ``GcsChangeLog``
records what is asked of it.
"""

from datetime import UTC, datetime

from app.features.memory.ports import Change
from app.infra.gcs.change_log import SEQ, WRITE, Claim, GcsChangeLog
from app.infra.gcs.logged_writes import LoggedWrite
from app.infra.gcs.resources import ObjectResource

KEY = "user/alice/notes/tea.md"
AT = datetime(2026, 12, 7, 1, 0, tzinfo=UTC)
CHANGE = Change("write_file", "alice", AT)


class Log:
    """Numbers claims from ``archived`` up; keeps every call."""

    def __init__(self, archived: int) -> None:
        self.archived = archived
        self.calls: list[tuple[object, ...]] = []

    async def newest_archived_seq(self, key: str) -> int:
        self.calls.append(("newest", key))
        return self.archived

    async def claim(self, key: str, change: Change, above: int = 0) -> Claim:
        self.calls.append(("claim", key, change, above))
        return Claim("user/alice/", above + 1, f"w{above + 1}")

    async def settle(self, claim: Claim, version: str | None, now: datetime) -> None:
        self.calls.append(("settle", claim.seq, version, now))


def logged(log: Log, change: Change | None = CHANGE) -> LoggedWrite:
    stand_in: GcsChangeLog = log  # type: ignore[assignment]
    return LoggedWrite(stand_in, KEY, change)


def version(seq: int) -> ObjectResource:
    return {"name": KEY, "generation": "7", "metadata": {SEQ: str(seq)}}


async def test_an_untracked_write_claims_nothing_and_settles_nothing() -> None:
    log = Log(4)
    write = logged(log, None)
    assert await write.stamp(None) == {}
    assert await write.stamp(version(2)) == {}
    await write.end("7")
    assert log.calls == []


async def test_a_create_claims_above_the_newest_archived_number() -> None:
    """An absent object: the number comes from the key's archive."""
    log = Log(4)
    write = logged(log)
    await write.end(None)  # nothing claimed yet: nothing to settle
    assert log.calls == []

    assert await write.stamp(None) == {WRITE: "w5", SEQ: "5"}
    assert log.calls == [("newest", KEY), ("claim", KEY, CHANGE, 4)]


async def test_a_claim_is_kept_while_above_what_the_write_replaces() -> None:
    """Another try over a version numbered below the claim stamps the same
    claim; over a version numbered as high (ours, or a rival's), the claim
    is settled void and a new one is taken above it."""
    log = Log(0)
    write = logged(log)
    assert await write.stamp(version(3)) == {WRITE: "w4", SEQ: "4"}
    assert await write.stamp(version(2)) == {WRITE: "w4", SEQ: "4"}
    assert log.calls == [("claim", KEY, CHANGE, 3)]

    assert await write.stamp(version(4)) == {WRITE: "w5", SEQ: "5"}
    assert log.calls[1:] == [("settle", 4, None, AT), ("claim", KEY, CHANGE, 4)]


async def test_the_claim_is_settled_once_with_the_version_made() -> None:
    log = Log(0)
    write = logged(log)
    await write.stamp(version(1))
    await write.end("9")
    await write.end("9")
    assert log.calls == [("claim", KEY, CHANGE, 1), ("settle", 2, "9", AT)]
