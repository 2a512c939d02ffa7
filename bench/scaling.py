"""Scaling curves: per-request cost as the store grows, and index cost per caller.

The store curve grows everyone else's files (1k to 1M, 100 per entity) under a
caller whose own files never change, so flat numbers mean no request does work
proportional to the whole store. The index curve grows the caller's own files
(10 to 500) and should rise linearly: the index is O(files of the caller).
"""

from collections.abc import Callable
from functools import partial

from bench import gcs
from bench.suite import Bench, Results, running, sqlite_url

STORE_OPS = ("read_file", "write_file", "get_memory_index")


def store_growth(
    bench: Bench, results: Results, progress: Callable[[str], None]
) -> None:
    concurrency = max(bench.profile.concurrency)
    for size in bench.profile.store_sizes:
        database, tokens = bench.dataset(f"store-{size}", bulk=size)
        start = partial(bench.wenchang, f"store-{size}", sqlite_url(database))
        with running(start) as (server,):
            row: dict[str, object] = {"files": size}
            for op in STORE_OPS:
                run = bench.measure(
                    server,
                    op,
                    concurrency,
                    tokens,
                    duration=bench.profile.scaling_duration,
                )
                row[op] = run
            results.store_scaling.append(row)
        database.unlink()
        progress(f"store of {size:,} files")


def index_growth(
    bench: Bench, results: Results, progress: Callable[[str], None]
) -> None:
    sizes = bench.profile.index_sizes
    database, tokens = bench.dataset("sized", sized=sizes)
    with running(
        lambda: bench.wenchang("sized-wenchang", sqlite_url(database)),
        lambda: bench.floor("sized-floor", bench.copy(database, "sized-floor")),
    ) as (wenchang, floor):
        for size in sizes:
            row: dict[str, object] = {"files": size}
            for name, server in (("wenchang", wenchang), ("floor", floor)):
                row[name] = bench.measure(
                    server,
                    "get_memory_index",
                    1,
                    tokens,
                    duration=bench.profile.scaling_duration,
                    reader=tokens.sized[size],
                )
            results.index_scaling.append(row)
    progress("index by caller size")


def gcs_index(bench: Bench, results: Results, progress: Callable[[str], None]) -> None:
    sizes = bench.profile.gcs_sizes
    if not sizes:
        return
    with gcs.emulator(bench.workdir) as emulator:
        if emulator is None:
            results.notes.append("GCS curve skipped: fake-gcs-server is not installed.")
            return
        _, tokens = bench.dataset("gcs", sized=sizes)
        gcs.seed_sized(emulator, sizes)
        caches = ("none", "memory")
        starters = [
            lambda cache=cache: bench.wenchang(
                f"gcs-{cache}",
                emulator.storage_url,
                WENCHANG_INDEX_CACHE=cache,
                STORAGE_EMULATOR_HOST=emulator.url,
            )
            for cache in caches
        ]
        with running(*starters) as started:
            servers = dict(zip(caches, started, strict=True))
            for size in sizes:
                row: dict[str, object] = {"files": size}
                for cache, server in servers.items():
                    row[cache] = bench.measure(
                        server,
                        "get_memory_index",
                        1,
                        tokens,
                        duration=bench.profile.scaling_duration,
                        reader=tokens.sized[size],
                    )
                results.gcs_scaling.append(row)
    progress("index on GCS")
