"""The metadata budget (docs/decisions.md, docs/concepts.md) and GCS's object-name
cap (docs/deploying.md), over HTTP on GCS.

A file's description plus its aliases (as JSON) may take at most 6 KiB on every
backend, so a file written anywhere can move to GCS (8 KiB of custom metadata);
more is INVALID_ARGUMENT naming ``aliases`` (or ``description``), and
``append_line`` checks the merged aliases. Run on the GCS emulator, where a file
at the budget must also land and read back whole.
"""

import json
from collections.abc import AsyncGenerator
from pathlib import Path
from urllib.parse import quote

import pytest

from app.infra.gcs.location import parse_gcs_url
from tests.http_support import FILE, Api, if_match, open_api
from tests.support.gcs_emulator import GcsEmulator
from tests.support.storage_adapters import storage_url

BUDGET = 6 * 1024
DESCRIPTION = "Tea " * 25


def metadata_bytes(description: str, aliases: list[str]) -> int:
    return len(description.encode()) + len(json.dumps(aliases).encode())


def aliases_taking(total: int, description: str = DESCRIPTION) -> list[str]:
    """Aliases (each at most 500 characters) that, with ``description``, take
    exactly ``total`` bytes of metadata."""
    aliases: list[str] = []
    while metadata_bytes(description, [*aliases, "x" * 500]) <= total:
        aliases.append("x" * 500)
    aliases.append("")
    aliases[-1] = "y" * (total - metadata_bytes(description, aliases))
    assert metadata_bytes(description, aliases) == total
    return aliases


@pytest.fixture
async def api(gcs_emulator: GcsEmulator, tmp_path: Path) -> AsyncGenerator[Api]:
    del gcs_emulator
    async with open_api(tmp_path, storage=storage_url("gcs", tmp_path)) as opened:
        yield opened


def body(description: str, aliases: list[str]) -> dict[str, object]:
    return {"content": "- [stated] x\n", "description": description, "aliases": aliases}


async def test_metadata_at_the_budget_lands_on_gcs_and_one_byte_more_is_refused(
    api: Api,
) -> None:
    create = api.alice | {"If-None-Match": "*"}
    full = aliases_taking(BUDGET)
    over = aliases_taking(BUDGET + 1)

    refused = await api.http.put(FILE, json=body(DESCRIPTION, over), headers=create)
    landed = await api.http.put(FILE, json=body(DESCRIPTION, full), headers=create)
    read = await api.http.get(FILE, headers=api.alice)

    assert refused.status_code == 422, refused.text
    assert (refused.json()["code"], refused.json()["details"]["argument"]) == (
        "INVALID_ARGUMENT",
        "aliases",
    )
    assert landed.status_code == 201, landed.text
    assert read.json() == landed.json()
    assert (read.json()["description"], read.json()["aliases"]) == (DESCRIPTION, full)


async def test_a_description_over_the_budget_alone_names_description(
    api: Api,
) -> None:
    """4,096 two-byte characters: within the schema, over the budget alone."""
    wide = "é" * 4096
    refused = await api.http.put(
        FILE, json=body(wide, []), headers=api.alice | {"If-None-Match": "*"}
    )

    assert refused.status_code == 422, refused.text
    assert refused.json()["details"]["argument"] == "description"


async def test_an_append_whose_merged_aliases_pass_the_budget_changes_nothing(
    api: Api,
) -> None:
    full = aliases_taking(BUDGET)
    made = await api.http.put(
        FILE,
        json=body(DESCRIPTION, full[:-1]),
        headers=api.alice | {"If-None-Match": "*"},
    )
    assert made.status_code == 201, made.text
    grown = {"line": "- [stated] y", "aliases": [full[-1] + "z"]}

    refused = await api.http.post(
        f"{FILE}/lines",
        json=grown,
        headers=api.alice | if_match(made.json()["version"]),
    )
    read = await api.http.get(FILE, headers=api.alice)

    assert refused.status_code == 422, refused.text
    assert refused.json()["details"]["argument"] == "aliases"
    assert read.json() == made.json()


async def test_a_name_too_long_for_gcs_object_names_is_refused_before_gcs_sees_it(
    gcs_emulator: GcsEmulator, tmp_path: Path
) -> None:
    """GCS names objects with at most 1,024 bytes of UTF-8, and a file's archived
    versions are named ``<prefix>\\history/<key>\\<19 digits>``; a name holds at
    most 256 characters, which in four-byte characters reach past that. The longest name
    whose archive fits lands and keeps its history; one byte more is
    INVALID_ARGUMENT naming ``name`` and stores nothing (GCS itself would answer
    the upload with a 400: an internal error to the caller). The emulator takes
    any length, so only our own check can make this test pass."""
    del gcs_emulator
    url = storage_url("gcs", tmp_path)
    prefix = parse_gcs_url(url).prefix
    room = 1024 - len(f"{prefix}\\history/user/alice/notes/.md\\".encode()) - 19
    longest = "\U0001d11e" * (room // 4) + "x" * (room % 4)  # four bytes each
    over = "x" + longest
    assert (len(longest.encode()), len(over.encode())) == (room, room + 1)
    async with open_api(tmp_path, storage=url) as api:
        create = api.alice | {"If-None-Match": "*"}
        line = {"line": "- [stated] more"}
        base = "/v1/files/user/notes/"
        refused = await api.http.put(
            base + quote(over), json=body("Tea", []), headers=create
        )
        landed = await api.http.put(
            base + quote(longest), json=body("Tea", []), headers=create
        )
        version = landed.json()["version"]
        appended = await api.http.post(
            base + quote(longest) + "/lines",
            json=line,
            headers=api.alice | if_match(version),
        )
        versions = await api.http.get(
            base + quote(longest) + "/versions", headers=api.alice
        )
        listing = await api.http.get(base.removesuffix("/"), headers=api.alice)

    assert refused.status_code == 422, refused.text
    assert (refused.json()["code"], refused.json()["details"]["argument"]) == (
        "INVALID_ARGUMENT",
        "name",
    )
    assert landed.status_code == 201, landed.text
    assert appended.status_code == 200, appended.text
    assert [v["version"] for v in versions.json()["entries"]][1:] == [version]
    assert [f["name"] for f in listing.json()["entries"]] == [longest]
