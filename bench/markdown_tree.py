"""``python -m bench.markdown_tree N``: the markdown export and import of N files.

Seeds one entity of N small files in a scratch SQLite database (straight
through storage, 500 writes per group commit, then indexed for search), then
runs ``tenchi task run memory.export_markdown`` into an empty directory and
``memory.import_markdown`` of that tree into a second, empty entity, each in
its own process, as an operator would. Prints each task's files per second
(wall clock, process start included) and its peak resident set size
(``wait4``'s ``ru_maxrss`` of that process alone), so runs at two sizes show
whether memory grows with N.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from app.features.memory.ports import FileMetadata, Write
from app.infra.sqlite.search_drain import open_search_index
from app.infra.sqlite.storage import open_sqlite_storage

SEED_BATCH = 500
META = FileMetadata(
    "A note of the bench",
    ("bench", "ノート"),
    ("http",),
    datetime(2026, 3, 1, tzinfo=UTC),
)
BODY = "# Tea ☕\n\n- [stated] Prefers green tea in the morning.\n" * 4


async def seed(database: Path, count: int) -> None:
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        for start in range(0, count, SEED_BATCH):
            writes = (
                Write(f"user/alice/notes/note {n:07d} ☕.md", BODY.encode(), META)
                for n in range(start, min(start + SEED_BATCH, count))
            )
            await asyncio.gather(*(storage.put_if_version(w, None) for w in writes))
    # Indexed for search now, as a server's background drain would have done:
    # else the export's process would index the whole seed while it runs.
    async with open_search_index(str(database), drain_every=None) as index:
        while await index.drain():
            pass


def run_task(
    scratch: Path, name: str, payload: object
) -> tuple[dict[str, object], float, int]:
    """The task's result, its wall seconds and its peak RSS in KiB."""
    tenchi = str(Path(sys.executable).parent / "tenchi")
    env = os.environ | {
        "WENCHANG_STORAGE": f"sqlite:///{scratch / 'w.db'}",
        "WENCHANG_TOKENS_FILE": str(scratch / "tokens.json"),
    }
    started = time.perf_counter()
    with subprocess.Popen(
        [tenchi, "task", "run", name, "--input", json.dumps(payload), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdout is not None
        output = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{name} failed: {output.decode()}")
    return json.loads(output)["output"], seconds, usage.ru_maxrss


def measure(count: int) -> str:
    with tempfile.TemporaryDirectory(prefix="wenchang-markdown-tree-") as name:
        scratch = Path(name)
        asyncio.run(seed(scratch / "w.db", count))
        tree = str(scratch / "tree")
        rows: list[str] = []
        for task, payload, counted in (
            ("memory.export_markdown", {"entity_id": "alice"}, "written"),
            ("memory.import_markdown", {"entity_id": "copy"}, "created"),
        ):
            result, seconds, rss = run_task(
                scratch, task, {"scope": "user", "path": tree, **payload}
            )
            assert result[counted] == count, result
            rows.append(
                f"| {task} | {count:,} | {count / seconds:,.0f} | {rss / 1024:,.0f} |"
            )
    return "\n".join(
        ["| task | files | files/s | peak RSS (MiB) |", "|---|---:|---:|---:|", *rows]
    )


def main(argv: list[str]) -> int:
    print(measure(int(argv[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
