"""A write that loses a race to another agent's write of a file that has expired
by the time it is read again: the expired file is no file, never a conflict that
shows its content."""

from datetime import timedelta

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import file_key
from app.features.memory.ports import FileMetadata, Write
from app.features.memory.ports.storage_reads import CREATE_ATTEMPTS
from app.features.memory.schemas import WriteFile
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.storage import MemoryStorage

from .conftest import START, TickingClock, create, make_context
from .requests import append_request
from .scripted_storage import Race, ScriptedStorage

KEY = file_key("user", "alice", "notes", "tea")
SHORT_LIVED = "- [stated] Gone in a second.\n"


def short_lived_write(clock: TickingClock) -> Race:
    """Another agent writes the file to live one second, and that second passes."""

    async def race(storage: MemoryStorage) -> None:
        expires = START + timedelta(seconds=1)
        metadata = FileMetadata("", (), ("http",), START, expires)
        await storage.put(Write(KEY, SHORT_LIVED.encode(), metadata))
        clock.now = START + timedelta(seconds=2)

    return race


async def test_an_append_beaten_by_a_write_that_expired_finds_no_file() -> None:
    clock = TickingClock(step=timedelta(0))
    storage = ScriptedStorage()
    context = make_context(storage=storage, clock=clock)
    first = await create(context, "- [stated] Likes tea.\n")
    storage.races = [short_lived_write(clock)]

    with pytest.raises(AppError) as raised:
        await append_line(append_request(first.version), context)

    assert raised.value.code == "MEMORY_NOT_FOUND"
    assert storage.races == []
    stored = await storage.inner.get(KEY)
    assert stored is not None and stored.data == SHORT_LIVED.encode()


async def test_a_create_beaten_by_writes_that_expired_finds_no_file() -> None:
    clock = TickingClock(step=timedelta(0))
    storage = ScriptedStorage()
    context = make_context(storage=storage, clock=clock)
    storage.races = [short_lived_write(clock) for _ in range(CREATE_ATTEMPTS)]
    request = WriteFile(
        scope="user",
        area="notes",
        name="tea",
        content="- [stated] Likes tea.\n",
        description="",
        aliases=[],
        expected_version=None,
    )

    with pytest.raises(AppError) as raised:
        await write_file(request, context)

    assert raised.value.code == "MEMORY_NOT_FOUND"
    assert SHORT_LIVED not in str(raised.value)
    assert (storage.races, storage.conditional_puts) == ([], CREATE_ATTEMPTS)
