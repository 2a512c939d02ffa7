"""A keyed retry after an outcome unknown on GCS answers the write it already made.

The proxy lets a mutation land, loses its answer and then answers nothing, so
the server cannot check whether the write landed: a 503 whose details say the
outcome is unknown. The typed client retries it with the same
Idempotency-Key; by then GCS answers again, the retry runs afresh and finds
the file moved on by its own first attempt. It answers that write (never a
conflict with it, never applying it twice), on every mutation.
"""

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from wenchang_client import AsyncMemoryClient, AttemptOutcome, transient_retry

from app.infra.tokens.token_file import create_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant
from tests.support.gcs_emulator import GcsEmulator
from tests.support.in_process_client import open_in_process_client
from tests.support.storage_adapters import storage_url

WHERE = ("user", "notes", "tea")
OBJECT = "user/alice/notes/tea.md"
FIRST = "- [stated] Likes tea.\n"

type Mutation = Callable[[AsyncMemoryClient, str], Awaitable[object]]


async def write(client: AsyncMemoryClient, version: str) -> object:
    return await client.write_file(
        *WHERE,
        content="- [stated] Likes green tea.\n",
        description="",
        aliases=[],
        expected_version=version,
    )


async def append(client: AsyncMemoryClient, version: str) -> object:
    line = "- [stated] Likes green tea."
    return await client.append_line(*WHERE, line=line, expected_version=version)


async def replace(client: AsyncMemoryClient, version: str) -> object:
    # Applied twice, this edit would land again: its match stays unique.
    return await client.replace_fact(
        *WHERE, old_string="tea", new_string="tea, green tea", expected_version=version
    )


async def delete(client: AsyncMemoryClient, version: str) -> object:
    return await client.delete_file(*WHERE, expected_version=version)


MUTATIONS: dict[str, Mutation] = {
    "write_file": write,
    "append_line": append,
    "replace_fact": replace,
    "delete_file": delete,
}


@pytest.mark.parametrize("operation", list(MUTATIONS))
@pytest.mark.parametrize("hold", [0.0, 2.5], ids=["lost", "late"])
async def test_a_keyed_retry_after_an_unknown_outcome_answers_its_own_write(
    tmp_path: Path, gcs_emulator: GcsEmulator, operation: str, hold: float
) -> None:
    tokens = tmp_path / "tokens.json"
    secret, _ = create_token(tokens, {"user": Grant("alice", "owner")})
    url = storage_url("gcs", tmp_path).replace("timeout=5", "timeout=1")
    settings = Settings(storage=url, tokens_file=str(tokens), index_cache="none")
    app = build_app(settings, resolver=TokenFileResolver(tokens))
    proxy = gcs_emulator.proxy
    codes: list[str | None] = []

    def answer_again(outcome: AttemptOutcome) -> None:
        codes.append(outcome.error_code)
        proxy.answer_again()  # GCS is back before the client retries

    retry = transient_retry(max_attempts=4, total_timeout_seconds=60)
    client_of = open_in_process_client(
        app, token=secret, retry=retry, attempt_observers=[answer_again]
    )
    try:
        async with client_of as client:
            created = await client.write_file(
                *WHERE,
                content=FIRST,
                description="",
                aliases=[],
                expected_version=None,
            )
            lost = proxy.lost
            proxy.lose_answer(OBJECT, hold=hold, then_down=True)
            await MUTATIONS[operation](client, created.version)
            history = await client.list_versions(*WHERE)
    finally:
        proxy.lose_answer(None)
        proxy.answer_again()

    assert proxy.lost == lost + 1
    assert "BACKEND_UNAVAILABLE" in codes  # the outcome unknown, then retried
    operations = [entry.operation for entry in history.entries]
    assert operations == [operation, "write_file"]  # landed exactly once
