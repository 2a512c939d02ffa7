"""The index tool's direct answer is what the SDK's path writes from the model."""

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from app.features.memory.domain import BuiltIndex, build_index
from app.features.memory.ports import FileMetadata, ListedObject
from app.server.fast.mcp_index import index_result

DESCRIPTIONS = [
    "plain",
    'Thé 🍵 “quoted” \\ / " \t\x00\x1f',
    "Mate \x7f",  # json.dumps escapes DEL, pydantic-core does not
    "".join(chr(c) for c in range(0x20, 0x800)),
]


def built(description: str, max_bytes: int) -> BuiltIndex:
    listed = [
        ListedObject(
            f"{scope}/e-{n}/notes/file-{n}.md",
            FileMetadata(
                description,
                (f"alias-{n}", description),
                ("http",),
                datetime(2026, 1, 1, 0, 0, n, tzinfo=UTC),
            ),
            f"{n:020x}",
            f"2026-01-01T00:00:{n:02d}Z",
        )
        for n, scope in enumerate(("user", "team", "user", "project"))
    ]
    return build_index(listed, priority=("team",), max_bytes=max_bytes)


@pytest.mark.parametrize("description", DESCRIPTIONS)
@pytest.mark.parametrize("max_bytes", [1 << 20, 700])
async def test_index_answer_is_the_models_dump_and_sorted_text(
    description: str, max_bytes: int
) -> None:
    index = built(description, max_bytes)

    async def use_case(**_: Any) -> BuiltIndex:
        return index

    answer = await index_result(use_case)(None, {})  # type: ignore[arg-type]
    dump = index.index.model_dump(mode="json", by_alias=True)
    assert dump["capped"] if max_bytes < 1000 else not dump["capped"]
    assert answer.result == dump
    assert answer.text == json.dumps(dump, sort_keys=True, separators=(",", ":"))
