from dataclasses import replace

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import ReadFile
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.server.context import AppContext
from app.shared.errors import (
    version_conflict,
)

from .conftest import (
    LOCATION,
    ScriptedStorage,
    assert_error,
    create,
    make_context,
    remove,
    rewrite,
)
from .requests import FACTS
from .requests import replace_request as request


async def test_replace_fact_with_a_stale_version_reapplies_a_unique_match(
    context: AppContext,
) -> None:
    """A stale caller's edit lands on the current content while the match is unique."""
    first = await create(context, FACTS)
    theirs = await replace_fact(request(first.version, "coffee", "espresso"), context)

    replaced = await replace_fact(request(first.version), context)

    assert replaced.content == (
        "# Tea\n- [stated] Likes oolong tea.\n- [stated] Dislikes espresso.\n"
    )
    assert replaced.version not in (first.version, theirs.version)


async def test_replace_fact_with_a_stale_version_and_no_match_conflicts(
    context: AppContext,
) -> None:
    """Stale and no longer unique is a conflict, never a match error."""
    first = await create(context, FACTS)
    theirs = await replace_fact(request(first.version, "green", "black"), context)

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version), context)

    assert_error(
        caught.value,
        version_conflict,
        error="VersionConflictError",
        category="recoverable",
        content=theirs.content,
        version=theirs.version,
        **LOCATION,
    )


async def test_replace_fact_with_a_stale_version_and_two_matches_conflicts(
    context: AppContext,
) -> None:
    """A second occurrence added by another writer makes a stale edit conflict."""
    first = await create(context, FACTS)
    theirs = await replace_fact(
        request(first.version, "coffee", "green coffee"), context
    )

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["version"] == theirs.version


async def test_replace_fact_reapplies_after_a_race_that_keeps_the_match() -> None:
    """A write racing the put is absorbed: the edit is re-applied on top of it."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, FACTS)
    storage.races = [rewrite(FACTS + "- [stated] Races.\n")]

    replaced = await replace_fact(request(first.version), context)

    assert replaced.content == FACTS.replace("green", "oolong") + "- [stated] Races.\n"
    assert storage.conditional_puts == 3


async def test_replace_fact_gives_up_after_three_attempts_with_current_state() -> None:
    """After three lost races the conflict carries the file as it is now."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, FACTS)
    storage.races = [rewrite(f"{FACTS}{n}") for n in range(3)]

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version), context)

    current = await read_file(ReadFile(**LOCATION), context)
    assert storage.conditional_puts == 4
    assert current.content == f"{FACTS}2"
    assert caught.value.definition is version_conflict
    assert caught.value.details["content"] == current.content
    assert caught.value.details["version"] == current.version


async def test_replace_fact_reports_file_absent_when_a_race_deletes_it() -> None:
    """A file deleted mid-retry is NotFound, not a conflict."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, FACTS)
    storage.races = [remove()]

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version), context)

    assert caught.value.details["reason"] == "file_absent"


async def test_a_keyed_stale_replace_looks_for_its_own_write_only_once() -> None:
    """The unforgiving first attempt searches history for the call's own write;
    the forgiving attempt after it, losing a race, asks storage nothing."""
    storage = ScriptedStorage(keeps_call_keys=True)
    context = make_context(storage=storage)
    first = await create(context, FACTS)
    await replace_fact(request(first.version, "coffee", "espresso"), context)
    storage.races = [rewrite(FACTS + "- [stated] Races.\n")]
    reads = storage.history_reads

    replaced = await replace_fact(
        request(first.version), replace(context, call_key="k-1")
    )

    assert replaced.content == FACTS.replace("green", "oolong") + "- [stated] Races.\n"
    assert storage.conditional_puts == 4  # the create, theirs, the lost, the landed
    assert storage.history_reads == reads + 1
