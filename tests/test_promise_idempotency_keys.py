"""The shape of an ``Idempotency-Key`` (docs/http.md): 1-128 of ``A-Za-z0-9._:-``,
the first a letter or a digit.

A key of 128 such characters is honoured (its retry gets the first answer back);
anything else is refused as request syntax before the operation runs, and the
refused write changes nothing.
"""

from pathlib import Path
from typing import Any

import pytest

from tests.http_support import (
    FILE,
    Api,
    assert_validation_error,
    file_body,
    open_api,
    state,
)

LONGEST = "aZ09._:-" * 16
SHORTEST = "7"


@pytest.fixture
async def api(tmp_path: Path) -> Any:
    async with open_api(tmp_path) as api:
        yield api


@pytest.mark.parametrize("key", [LONGEST, SHORTEST])
async def test_a_key_of_1_to_128_allowed_characters_is_honoured(
    api: Api, key: str
) -> None:
    headers = api.alice | {"If-None-Match": "*", "Idempotency-Key": key}
    assert len(LONGEST) == 128

    first = await api.http.put(FILE, json=file_body(), headers=headers)
    retry = await api.http.put(FILE, json=file_body(), headers=headers)

    assert (first.status_code, retry.status_code) == (201, 201)
    assert retry.json() == first.json()
    assert retry.headers["ETag"] == first.headers["ETag"]


@pytest.mark.parametrize(
    "key",
    ["", "k" * 129, "two words", "../etc", "a/b", "key!", "tab\tkey", "-key", ".key"],
)
async def test_any_other_key_is_refused_and_writes_nothing(api: Api, key: str) -> None:
    before = await state(api)
    headers = api.alice | {"If-None-Match": "*", "Idempotency-Key": key}

    refused = await api.http.put(FILE, json=file_body(), headers=headers)

    assert_validation_error(refused)
    assert await state(api) == before


async def test_a_key_reused_by_another_operation_is_a_conflict(api: Api) -> None:
    """docs/http.md: the same key with a different request is 409
    IDEMPOTENCY_CONFLICT — a request of another operation too (each operation
    kept its own keys: an append reusing a write's key applied)."""
    key = {"Idempotency-Key": "reused-1"}
    made = await api.http.put(
        FILE, json=file_body(), headers=api.alice | key | {"If-None-Match": "*"}
    )
    assert made.status_code == 201, made.text
    before = await state(api)
    current = api.alice | key | {"If-Match": made.headers["ETag"]}

    answers = [
        await api.http.post(
            f"{FILE}/lines", json={"line": "- [stated] x"}, headers=current
        ),
        await api.http.post(
            f"{FILE}/replace",
            json={"old_string": "tea", "new_string": "coffee"},
            headers=current,
        ),
        await api.http.post(
            f"{FILE}/restore", json={"version": made.json()["version"]}, headers=current
        ),
        await api.http.delete(FILE, headers=current),
    ]
    replayed = await api.http.put(
        FILE, json=file_body(), headers=api.alice | key | {"If-None-Match": "*"}
    )

    assert [a.status_code for a in answers] == [409] * 4
    assert {a.json()["code"] for a in answers} == {"IDEMPOTENCY_CONFLICT"}
    assert replayed.status_code == 201, replayed.text
    assert await state(api) == before


async def test_two_keys_on_one_write_are_refused_and_change_nothing(
    api: Api,
) -> None:
    """Two Idempotency-Key headers are ambiguous (the last one was used, so a
    retry with the first applied again): INVALID_ARGUMENT on idempotency_key,
    after the 401 a request without a valid token gets first."""
    keys = [("Idempotency-Key", "first-1"), ("Idempotency-Key", "second-2")]
    create = [("If-None-Match", "*"), *keys]
    before = await state(api)

    refused = await api.http.put(
        FILE, json=file_body(), headers=[*api.alice.items(), *create]
    )
    anonymous = await api.http.put(FILE, json=file_body(), headers=create)

    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == "INVALID_ARGUMENT"
    assert refused.json()["details"]["argument"] == "idempotency_key"
    assert anonymous.status_code == 401, anonymous.text
    assert await state(api) == before
