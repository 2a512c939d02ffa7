"""A keyed call repeated after its first attempt landed answers that write.

Only storage whose records keep the call's key can tell its own write from
another's; elsewhere the repeat is refused as any stale call is, without
reading the file's history at all.
"""

from collections.abc import Awaitable, Callable
from dataclasses import replace

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import DeleteFile, ListVersions, ReadFile
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.list_versions import list_versions
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext
from app.shared.errors import memory_not_found, version_conflict

from .conftest import LOCATION, ScriptedStorage, create, make_context
from .requests import FACTS, append_request, replace_request, write_request

type Mutation = Callable[[AppContext, str], Awaitable[object]]


async def _create(context: AppContext, version: str) -> object:
    return await write_file(write_request(name="new"), context)


async def _write(context: AppContext, version: str) -> object:
    return await write_file(write_request(expected_version=version), context)


async def _append(context: AppContext, version: str) -> object:
    return await append_line(append_request(version), context)


async def _replace(context: AppContext, version: str) -> object:
    # Applied twice, this edit would land again: its match stays unique.
    return await replace_fact(replace_request(version, "tea", "tea, oolong"), context)


async def _delete(context: AppContext, version: str) -> object:
    return await delete_file(DeleteFile(**LOCATION, expected_version=version), context)


MUTATIONS: dict[str, tuple[str, Mutation]] = {
    "create": ("new", _create),
    "write_file": ("tea", _write),
    "append_line": ("tea", _append),
    "replace_fact": ("tea", _replace),
    "delete_file": ("tea", _delete),
}
REFUSED = {"delete_file": memory_not_found}


async def _landed_once(
    keeps_call_keys: bool, name: str, mutation: Mutation
) -> tuple[ScriptedStorage, AppContext, str, object]:
    """A file, then one keyed call of ``mutation`` that landed."""
    storage = ScriptedStorage(keeps_call_keys=keeps_call_keys)
    setup = make_context(storage=storage)
    version = (await create(setup, FACTS)).version
    keyed = replace(setup, call_key="k-1")
    first = await mutation(keyed, version)
    return storage, keyed, version, first


async def _operations(context: AppContext, name: str) -> list[str]:
    request = ListVersions(scope="user", area="notes", name=name)
    listed = await list_versions(request, context)
    return [entry.operation for entry in listed.entries]


@pytest.mark.parametrize("operation", list(MUTATIONS))
async def test_a_keyed_repeat_answers_its_own_write_where_records_keep_call_keys(
    operation: str,
) -> None:
    name, mutation = MUTATIONS[operation]
    storage, keyed, version, first = await _landed_once(True, name, mutation)
    before = await _operations(keyed, name)

    again = await mutation(keyed, version)

    assert again == first
    assert storage.history_reads == 1 + 1  # _operations's listing, then the lookup
    assert await _operations(keyed, name) == before  # never applied twice


@pytest.mark.parametrize("operation", list(MUTATIONS))
@pytest.mark.parametrize(
    ("keeps_call_keys", "repeat_key", "looked_up"),
    [(False, "k-1", False), (True, "", False), (True, "k-2", True)],
    ids=["keys-not-kept", "unkeyed-repeat", "another-call"],
)
async def test_a_repeat_that_cannot_be_recognised_runs_as_any_stale_call(
    operation: str, keeps_call_keys: bool, repeat_key: str, looked_up: bool
) -> None:
    """Without kept keys or the same key the repeat is refused (a stale
    replace_fact whose match stays unique is applied again), and history is
    searched only on storage that keeps keys, for a call that has one."""
    name, mutation = MUTATIONS[operation]
    storage, keyed, version, _ = await _landed_once(keeps_call_keys, name, mutation)
    before = await _operations(keyed, name)
    reads = storage.history_reads
    repeat = mutation(replace(keyed, call_key=repeat_key), version)

    if operation == "replace_fact":
        await repeat
        assert await _operations(keyed, name) == [operation, *before]
    else:
        with pytest.raises(AppError) as caught:
            await repeat
        assert caught.value.definition is REFUSED.get(operation, version_conflict)
        assert await _operations(keyed, name) == before
    assert storage.history_reads == reads + looked_up + 1  # + 1: _operations


async def test_replace_fact_answers_its_own_write_that_landed_unanswered() -> None:
    """A put that landed but reported a lost race is looked up before forgiving."""
    storage = ScriptedStorage(keeps_call_keys=True)
    context = make_context(storage=storage)
    version = (await create(context, FACTS)).version
    storage.lose_acks = True

    replaced = await _replace(replace(context, call_key="k-1"), version)

    assert storage.conditional_puts == 2  # the create, then the edit once
    assert await _operations(context, "tea") == ["replace_fact", "write_file"]
    assert replaced == await read_file(ReadFile(**LOCATION), context)


async def test_a_keyed_repeat_of_an_empty_file_s_create_answers_it_empty() -> None:
    """An empty body is still the call's own write: answered as it is."""
    storage = ScriptedStorage(keeps_call_keys=True, lose_acks=True)
    keyed = replace(make_context(storage=storage), call_key="k-1")

    created = await write_file(write_request("", name="new"), keyed)

    assert (created.name, created.content) == ("new", "")
