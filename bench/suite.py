"""The benchmark runs: side-by-side rounds against the floor, and scaling curves.

Within a round every server answers the same scenario back to back (the order
rotates between rounds), so a ratio compares runs seconds apart on one machine;
the report takes the median of the per-round ratios.
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

HTTP_OPS = ("read_file", "write_file", "append_line", "get_memory_index", "mixed")
MCP_OPS = ("read_file", "write_file", "append_line", "get_memory_index")
BENCH_SETTINGS = {
    # The floor has no index cache, returns every entry and limits no rate:
    # compare like with like (the rate limiter has its own variant).
    "WENCHANG_INDEX_CACHE": "none",
    "WENCHANG_INDEX_MAX_BYTES": "1048576",
    "WENCHANG_RATE_LIMIT": "0",
}
RATE_LIMITED = {"WENCHANG_RATE_LIMIT": "1000000000"}
"""The per-credential rate limiter switched on, with a limit load never reaches."""


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
    variants: bool = True
    """Also run the no-revalidation and index-cache variants of Wenchang."""
    before: bool = False
    """Also run the code the optimisations replaced (``--before``)."""


FULL = Profile(
    name="full",
    rounds=3,
    duration=1.5,
    warmup=0.4,
    concurrency=(1, 16),
    store_sizes=(1_000, 100_000, 1_000_000),
    index_sizes=(10, 50, 100, 250, 500),
    scaling_duration=1.5,
    gcs_sizes=(10, 100, 500),
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
    variants=False,
)


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
    notes: list[str] = field(default_factory=list[str])


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
        )

    def dataset(
        self, name: str, *, bulk: int = 0, sized: Sequence[int] = ()
    ) -> tuple[Path, seed.Tokens]:
        """A database and its token files (Wenchang's and the floor's)."""
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
        **settings: str,
    ) -> Server:
        """Start a Wenchang server (or a variant's ``target``); not yet healthy."""
        env = {
            **BENCH_SETTINGS,
            "WENCHANG_STORAGE": storage,
            "WENCHANG_TOKENS_FILE": str(self.tokens_path),
            **settings,
        }
        return launch_server(name, target, workdir=self.workdir, env=env)

    def floor(self, name: str, database: Path) -> Server:
        """Start the floor server; not yet healthy."""
        return launch_floor(
            name, workdir=self.workdir, database=database, tokens=self.floor_tokens_path
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
            server.wait_healthy()
        yield started


def _starters(bench: Bench, database: Path) -> dict[str, Callable[[], Server]]:
    """Every server of the comparison, by name; each on its own copy of the data.

    MCP calls go to a Wenchang process of their own, so the HTTP process's
    numbers never carry another surface's garbage or caches.
    """

    def wenchang(
        name: str, target: str = "app.server.asgi:app", **settings: str
    ) -> Callable[[], Server]:
        storage = sqlite_url(bench.copy(database, name))
        return lambda: bench.wenchang(name, storage, target, **settings)

    starters: dict[str, Callable[[], Server]] = {
        "wenchang": wenchang("wenchang"),
        "floor": lambda: bench.floor("floor", bench.copy(database, "floor")),
        "mcp": wenchang("mcp"),
    }
    if bench.profile.variants:
        starters |= {
            "unvalidated": wenchang(
                "unvalidated", "bench.variants:without_revalidation"
            ),
            "cached": wenchang("cached", WENCHANG_INDEX_CACHE="memory"),
            "limited": wenchang("limited", **RATE_LIMITED),
            "mcp-rich": wenchang("mcp-rich", "bench.variants:rich_logging"),
        }
    if bench.profile.before:
        starters["before"] = wenchang("before", "bench.variants:before_optimisations")
    return starters


def compare(bench: Bench, results: Results, progress: Callable[[str], None]) -> None:
    """The side-by-side rounds: Wenchang, its variants and the floor, every op."""
    database, tokens = bench.dataset("main")
    starters = _starters(bench, database)
    with running(*starters.values()) as started:
        servers = dict(zip(starters, started, strict=True))
        results.mcp_available = _has_mcp(servers["mcp"], tokens)
        if not results.mcp_available:
            results.notes.append("MCP rows skipped: /mcp did not answer tools/list.")
        plan = _plan(bench.profile, results.mcp_available)
        for round_number in range(bench.profile.rounds):
            for op, concurrency, names in plan:
                turn = round_number % len(names)
                for name in names[turn:] + names[:turn]:
                    surface = "mcp" if name.startswith("mcp") else "http"
                    run = bench.measure(
                        servers[name], op, concurrency, tokens, surface=surface
                    )
                    results.runs.setdefault((name, op, concurrency), []).append(run)
                progress(f"round {round_number + 1}: {op} c={concurrency}")


def _plan(profile: Profile, mcp: bool) -> list[tuple[str, int, list[str]]]:
    plan: list[tuple[str, int, list[str]]] = []
    for op in HTTP_OPS:
        for concurrency in profile.concurrency:
            names = ["wenchang", "floor"]
            if profile.before:
                names.append("before")
            if profile.variants:
                names += ["unvalidated", "limited"]
            if mcp and op in MCP_OPS:
                names.append("mcp")
                if profile.variants:
                    names.append("mcp-rich")
            if profile.variants and op == "get_memory_index":
                names.append("cached")
            plan.append((op, concurrency, names))
    return plan
