"""Edits on storage that edits in place (SQLite, the default): a file that has
expired is no file, named as the edit asked for it, and nothing is written."""

from datetime import timedelta
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import file_key
from app.features.memory.ports import EditsInPlace
from app.features.memory.schemas import WriteFile
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.write_file import write_file
from app.infra.port_wiring import open_storage

from .conftest import START, TickingClock, make_context
from .requests import append_request


async def test_an_edit_in_place_of_an_expired_file_finds_no_file(
    tmp_path: Path,
) -> None:
    clock = TickingClock(step=timedelta(0))
    async with open_storage(f"sqlite:///{tmp_path / 'wenchang.db'}") as storage:
        assert isinstance(storage, EditsInPlace)
        context = make_context(storage=storage, clock=clock)
        request = WriteFile.model_validate(
            {
                "scope": "user",
                "area": "notes",
                "name": "tea",
                "content": "- [stated] Likes tea.\n",
                "description": "",
                "aliases": [],
                "expected_version": None,
                "ttl_seconds": 1,
            }
        )
        first = await write_file(request, context)
        clock.now = START + timedelta(seconds=1)

        with pytest.raises(AppError) as raised:
            await append_line(append_request(first.version), context)

        assert raised.value.code == "MEMORY_NOT_FOUND"
        assert str(raised.value).startswith(
            "No file exists at scope user, area notes, name tea yet"
        )
        stored = await storage.get(file_key("user", "alice", "notes", "tea"))
        assert stored is not None and stored.version == first.version
