"""The benchmark runs: side-by-side rounds of every server on one dataset.

Every server of the comparison (``ENTRANTS``: Wenchang like for like, the two
floors, the shipped default configuration, the single-setting variants and the
MCP surface) runs at once, each on its own copy of one dataset. Within a round
every server that takes part in a scenario answers it back to back (the order
rotates between rounds), so a ratio compares runs seconds apart on one
machine; the report takes the median of the per-round ratios.
"""

import json
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import seed
from bench.servers import LoadGenerator, Server, launch_floor, launch_server

FILE_OPS = ("read_file", "write_file", "append_line", "replace_fact")
HTTP_OPS = (*FILE_OPS, "get_memory_index", "mixed")
MCP_OPS = ("read_file", "write_file", "append_line", "get_memory_index")
WRITE_OPS = ("write_file", "append_line")
HISTORY_OPS = ("list_versions", "read_version")
SCENARIOS = (*HTTP_OPS, "index_revalidation", *HISTORY_OPS)
"""Every scenario, in the order a round runs them (history reads after writes)."""
BENCH_SETTINGS = {
    # The floors have no index cache, return every entry and limit no rate:
    # compare like with like (the shipped defaults are an entrant of their own).
    "WENCHANG_INDEX_CACHE": "none",
    "WENCHANG_INDEX_MAX_BYTES": "1048576",
    "WENCHANG_RATE_LIMIT": "0",
}


@dataclass(frozen=True, slots=True)
class Entrant:
    """One server of the comparison and the scenarios it answers."""

    name: str
    kind: str
    """``wenchang`` (uvicorn ``target``), or a floor of ``FLOOR_APPS``."""
    ops: tuple[str, ...]
    settings: dict[str, str] = field(default_factory=dict[str, str])
    target: str = "app.server.asgi:app"
    like_for_like: bool = True
    """Runs with ``BENCH_SETTINGS``; the shipped defaults do not."""
    surface: str = "http"
    variant: bool = False
    """Only in profiles with ``variants`` (isolates one cost, not a headline row)."""


NORMAL = {"WENCHANG_SQLITE_SYNCHRONOUS": "normal"}
ENTRANTS = (
    Entrant("wenchang", "wenchang", SCENARIOS),
    Entrant("tenchi", "tenchi", HTTP_OPS),
    Entrant("floor", "floor", HTTP_OPS),
    Entrant(
        "default", "wenchang", (*HTTP_OPS, "index_revalidation"), like_for_like=False
    ),
    Entrant(
        "unlimited",
        "wenchang",
        ("read_file", "write_file"),
        {"WENCHANG_RATE_LIMIT": "0"},
        like_for_like=False,
    ),
    Entrant("mcp", "wenchang", MCP_OPS, surface="mcp"),
    Entrant("mcp-floor", "mcp-floor", MCP_OPS, surface="mcp"),
    Entrant("normal", "wenchang", WRITE_OPS, NORMAL),
    Entrant("floor-normal", "floor", WRITE_OPS, NORMAL),
    Entrant(
        "no-history",
        "wenchang",
        (*WRITE_OPS, "replace_fact"),
        target="bench.variants:without_history",
    ),
    Entrant(
        "audit-off",
        "wenchang",
        ("read_file", "get_memory_index", *WRITE_OPS),
        {"WENCHANG_AUDIT": "none"},
    ),
)


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    rounds: int
    duration: float
    warmup: float
    concurrency: tuple[int, ...]
    store_sizes: tuple[int, ...]
    index_sizes: tuple[int, ...]
    scaling_duration: float
    gcs_sizes: tuple[int, ...]
    search_files: int
    """Files in the searching caller's reach on SQLite."""
    gcs_search_files: int
    """The same on the GCS emulator (0: no GCS search row)."""
    variants: bool = True
    """Also run the servers that isolate one cost (``Entrant.variant``)."""


# Five rounds, not three: a write run's throughput swings by a third between runs
# seconds apart (fsync latency), and a median of three per-round ratios moved
# targets across their lines from one full run to the next.
FULL = Profile(
    name="full",
    rounds=5,
    duration=1.0,
    warmup=0.3,
    concurrency=(1, 16),
    store_sizes=(1_000, 100_000, 1_000_000),
    index_sizes=(10, 50, 100, 250, 500),
    scaling_duration=1.2,
    gcs_sizes=(10, 100, 500),
    search_files=10_000,
    gcs_search_files=1_000,
)
QUICK = Profile(
    name="quick",
    rounds=1,
    duration=0.5,
    warmup=0.2,
    concurrency=(1, 16),
    store_sizes=(1_000,),
    index_sizes=(10, 500),
    scaling_duration=0.5,
    gcs_sizes=(100,),
    search_files=2_000,
    gcs_search_files=200,
    variants=False,
)
SMOKE = Profile(
    name="smoke",
    rounds=1,
    duration=0.2,
    warmup=0.05,
    concurrency=(1, 4),
    store_sizes=(1_000,),
    index_sizes=(10,),
    scaling_duration=0.2,
    gcs_sizes=(),
    search_files=200,
    gcs_search_files=0,
    variants=False,
)
PROFILES = {profile.name: profile for profile in (FULL, QUICK, SMOKE)}


@dataclass
class Run:
    cpu_us: float
    """Server CPU time per request sent (warm-up included): robust to other load."""
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    rss_mb: float
    samples: list[str]
    p95_ms: float = float("nan")


@dataclass
class Results:
    profile: Profile
    runs: dict[tuple[str, str, int], list[Run]] = field(
        default_factory=dict[tuple[str, str, int], list[Run]]
    )
    """(server, op, concurrency) -> one Run per round."""
    mcp_available: bool = False
    store_scaling: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    index_scaling: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    gcs_scaling: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    search: list[tuple[str, int, Run]] = field(
        default_factory=list[tuple[str, int, Run]]
    )
    """(backend, files in reach, run at c=1)."""
    notes: list[str] = field(default_factory=list[str])

    def has(self, name: str) -> bool:
        return any(key[0] == name for key in self.runs)


class Bench:
    """One working directory, one load generator, the servers of one dataset."""

    def __init__(self, profile: Profile, workdir: Path, load: LoadGenerator) -> None:
        self.profile = profile
        self.workdir = workdir
        self.load = load
        self.read_files = [[f.scope, f.area, f.name] for f in seed.index_files()]

    def measure(
        self,
        server: Server,
        op: str,
        concurrency: int,
        tokens: seed.Tokens,
        *,
        surface: str = "http",
        duration: float | None = None,
        reader: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Run:
        spec = {
            "host": "127.0.0.1",
            "port": server.port,
            "scenario": op,
            "surface": surface,
            "concurrency": concurrency,
            "duration": duration or self.profile.duration,
            "warmup": self.profile.warmup,
            "reader_token": reader or tokens.reader,
            "writer_token": tokens.writer,
            "read_files": self.read_files,
            "extra": extra or {},
        }
        cpu = server.cpu_seconds()
        result = self.load.run(spec)
        cpu = server.cpu_seconds() - cpu
        return Run(
            cpu_us=cpu * 1e6 / result["sent"] if result["sent"] else float("nan"),
            rps=result["rps"],
            p50_ms=result["p50_ms"],
            p99_ms=result["p99_ms"],
            errors=result["errors"],
            rss_mb=server.rss_mb(),
            samples=result["error_samples"],
            p95_ms=result["p95_ms"],
        )

    def dataset(
        self, name: str, *, bulk: int = 0, sized: Sequence[int] = ()
    ) -> tuple[Path, seed.Tokens]:
        """A database and its token files (Wenchang's and the floors')."""
        database = self.workdir / f"{name}.db"
        seed.write_database(database, bulk=bulk, sized=sized)
        tokens = seed.write_tokens(self.tokens_path, sized=sized)
        self.floor_tokens_path.write_text(json.dumps(tokens.floor_table(sized)))
        return database, tokens

    @property
    def tokens_path(self) -> Path:
        return self.workdir / "tokens.json"

    @property
    def floor_tokens_path(self) -> Path:
        return self.workdir / "floor-tokens.json"

    def copy(self, database: Path, name: str) -> Path:
        target = self.workdir / f"{name}.db"
        shutil.copyfile(database, target)
        return target

    def wenchang(
        self,
        name: str,
        storage: str,
        target: str = "app.server.asgi:app",
        *,
        like_for_like: bool = True,
        **settings: str,
    ) -> Server:
        """Start a Wenchang server (or a variant's ``target``); not yet healthy."""
        env = {
            **(BENCH_SETTINGS if like_for_like else {}),
            "WENCHANG_STORAGE": storage,
            "WENCHANG_TOKENS_FILE": str(self.tokens_path),
            **settings,
        }
        return launch_server(name, target, workdir=self.workdir, env=env)

    def floor(
        self,
        name: str,
        database: Path,
        target: str = "bench.floor:app",
        **settings: str,
    ) -> Server:
        """Start a floor server; not yet healthy."""
        return launch_floor(
            name,
            target,
            workdir=self.workdir,
            database=database,
            tokens=self.floor_tokens_path,
            env=settings,
        )


def sqlite_url(database: Path) -> str:
    return f"sqlite:///{database}"


def _has_mcp(server: Server, tokens: seed.Tokens) -> bool:
    import urllib.error
    import urllib.request

    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    request = urllib.request.Request(
        f"{server.url}/mcp",
        data=json.dumps(message).encode(),
        headers={
            "Authorization": f"Bearer {tokens.reader}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status == 200 and b"read_file" in answer.read()
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def running(*starters: Callable[[], Server]) -> Iterator[list[Server]]:
    """Servers launched together, healthy for the block, stopped on exit."""
    with ExitStack() as stack:
        started: list[Server] = []
        for start in starters:
            server = start()
            stack.callback(server.stop)
            started.append(server)
        for server in started:
            server.wait_healthy(timeout=120)
        yield started


FLOOR_APPS = {
    "floor": "bench.floor:app",
    "tenchi": "bench.tenchi_floor:app",
    "mcp-floor": "bench.mcp_floor:app",
}


def entrants(profile: Profile) -> list[Entrant]:
    return [e for e in ENTRANTS if profile.variants or not e.variant]


def _starter(bench: Bench, entrant: Entrant, database: Path) -> Callable[[], Server]:
    """Each server on its own copy of the data (MCP too: no shared caches)."""
    copy = bench.copy(database, entrant.name)
    if entrant.kind in FLOOR_APPS:
        target = FLOOR_APPS[entrant.kind]
        return lambda: bench.floor(entrant.name, copy, target, **entrant.settings)
    return lambda: bench.wenchang(
        entrant.name,
        sqlite_url(copy),
        entrant.target,
        like_for_like=entrant.like_for_like,
        **entrant.settings,
    )


@contextmanager
def _healthy(
    chosen: Sequence[Entrant],
    starters: Sequence[Callable[[], Server]],
    results: Results,
) -> Iterator[dict[str, Server]]:
    """The entrants' servers that came up; one that did not is a note, not a crash."""
    with ExitStack() as stack:
        launched: list[tuple[Entrant, Server]] = []
        for entrant, start in zip(chosen, starters, strict=True):
            server = start()
            stack.callback(server.stop)
            launched.append((entrant, server))
        servers: dict[str, Server] = {}
        for entrant, server in launched:
            try:
                server.wait_healthy(timeout=120)
            except RuntimeError as exc:
                results.notes.append(
                    f"{entrant.name} did not start, its rows are missing: "
                    f"{str(exc)[-300:]!r}"
                )
                continue
            servers[entrant.name] = server
        yield servers


def compare(bench: Bench, results: Results, progress: Callable[[str], None]) -> None:
    """The side-by-side rounds: every entrant, every scenario it answers."""
    database, tokens = bench.dataset("main")
    chosen = entrants(bench.profile)
    starters = [_starter(bench, entrant, database) for entrant in chosen]
    with _healthy(chosen, starters, results) as servers:
        chosen = [e for e in chosen if e.name in servers]
        results.mcp_available = "mcp" in servers and _has_mcp(servers["mcp"], tokens)
        if not results.mcp_available:
            results.notes.append("MCP rows skipped: /mcp did not answer tools/list.")
            chosen = [e for e in chosen if e.name != "mcp"]
        progress(f"{len(servers)} servers healthy")
        for round_number in range(bench.profile.rounds):
            for op, concurrency, names in plan(bench.profile, chosen):
                turn = round_number % max(1, len(names))
                for entrant in names[turn:] + names[:turn]:
                    run = bench.measure(
                        servers[entrant.name],
                        op,
                        concurrency,
                        tokens,
                        surface=entrant.surface,
                    )
                    key = (entrant.name, op, concurrency)
                    results.runs.setdefault(key, []).append(run)
                progress(f"round {round_number + 1}: {op} c={concurrency}")


def plan(
    profile: Profile, chosen: Sequence[Entrant]
) -> list[tuple[str, int, list[Entrant]]]:
    return [
        (op, concurrency, [e for e in chosen if op in e.ops])
        for op in SCENARIOS
        for concurrency in profile.concurrency
    ]
