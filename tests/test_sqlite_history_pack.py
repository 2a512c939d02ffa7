"""SQLite history keeps a long file's content deflated, and reads every record exactly.

A record stores content over ``PACK_OVER`` bytes deflated when that is shorter
(its ``data`` is then shorter than its ``size``); a record stored as it is —
short or incompressible content, or any record written before deflating existed
— reads back as it was stored.
"""

import random
from pathlib import Path

from app.features.memory.ports import Write
from app.infra.sqlite.history_pack import PACK_OVER, pack, unpack
from tests.support.sqlite_file import opened_database, sql
from tests.test_sqlite_edits import CHANGE, KEY, META

LONG = "".join(f"- [stated] Fact number {n} about tea.\n" for n in range(80)).encode()


def stored(database: Path) -> list[tuple[int, int]]:
    """(length of stored data, size) of every record of ``KEY``, oldest first."""
    rows = sql(
        database,
        "SELECT length(data), size FROM memory_history WHERE key = ? ORDER BY seq",
        KEY,
    )
    return [(int(length), int(size)) for length, size in rows]


def incompressible(size: int) -> bytes:
    return random.Random(7).randbytes(size)


async def test_records_read_back_exactly_deflated_or_not(tmp_path: Path) -> None:
    bodies = [LONG, b"- [stated] short\n", incompressible(3000), LONG + b"- end\n"]
    async with opened_database(tmp_path) as opened:
        storage = opened.storage
        versions: list[str] = []
        expected: str | None = None
        for body in bodies:
            write = Write(KEY, body, META, change=CHANGE)
            expected = await storage.put_if_version(write, expected)
            assert expected is not None
            versions.append(expected)

        lengths = stored(opened.database)
        read = [await storage.get_version(KEY, v) for v in versions]

    assert [record.data for record in read if record] == bodies
    deflated = [length < size for length, size in lengths]
    assert deflated == [True, False, False, True]
    assert all(
        size == len(body) for (_, size), body in zip(lengths, bodies, strict=True)
    )


async def test_a_long_record_written_before_deflating_still_reads(
    tmp_path: Path,
) -> None:
    async with opened_database(tmp_path) as opened:
        version = await opened.storage.put_if_version(
            Write(KEY, LONG, META, change=CHANGE), None
        )
        assert version is not None
        # As the version before stored it: the content itself.
        sql(
            opened.database,
            "UPDATE memory_history SET data = ? WHERE key = ?",
            LONG,
            KEY,
        )
        record = await opened.storage.get_version(KEY, version)

    assert stored(opened.database) == [(len(LONG), len(LONG))]
    assert record is not None and record.data == LONG


def test_pack_keeps_short_or_incompressible_content_and_unpack_inverts_it() -> None:
    cases = {
        b"": True,
        LONG[:PACK_OVER]: True,
        LONG[: PACK_OVER + 1]: False,
        LONG * 40: False,
        incompressible(PACK_OVER * 4): True,
    }
    for body, as_is in cases.items():
        kept = pack(body)
        assert unpack(kept, len(body)) == body
        assert (kept == body) == as_is and len(kept) <= len(body)


async def test_only_content_over_pack_over_is_stored_packed(tmp_path: Path) -> None:
    bodies = [LONG[:PACK_OVER], LONG[: PACK_OVER + 1], b""]
    async with opened_database(tmp_path) as opened:
        expected: str | None = None
        for body in bodies:
            write = Write(KEY, body, META, change=CHANGE)
            expected = await opened.storage.put_if_version(write, expected)
            assert expected is not None
        lengths = stored(opened.database)

    assert [length < size for length, size in lengths] == [False, True, False]


def test_content_deflated_to_its_own_length_is_kept_as_it_is() -> None:
    """``unpack`` tells a deflated record by a length below ``size``: a deflate
    exactly as long as the content must not be what the record keeps."""
    # Incompressible bytes, then a run: somewhere in this range the deflate
    # (a stored block plus a short run) is exactly as long as the content.
    for run in range(64):
        body = incompressible(PACK_OVER + 88) + b"a" * run
        assert unpack(pack(body), len(body)) == body
