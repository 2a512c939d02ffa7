"""Model-based test: the seven operations against a tiny reference model.

Hypothesis drives random sequences of ``get_memory_index``, ``read_file``,
``list_prefix``, ``write_file``, ``append_line``, ``replace_fact`` and
``delete_file`` by three callers (two of whom share a team entity, one of
whom may not write it) through the real use cases, over every storage adapter
reachable by URL. After every step the whole store is compared with the model,
so a result that looks right but left storage wrong is a divergence too.

The ``pair`` rule runs two operations concurrently (every sequence opens with
one, ``seed_then_race``). Its outcome must equal
running them one after the other in some order (linearizability), with one
documented relaxation: the per-entity file cap is checked before the create,
not atomically with it, so concurrent creates may each see the count from
before the other.

History is modelled too: every operation that changed a file in the model
adds one record (a delete a tombstone) and the storage's version history of
every file must match it record for record after every step; in a concurrent
pair, the records follow the order that linearizes it, so a losing writer
leaves none.

``WENCHANG_MODEL_EXAMPLES`` sets the number of sequences per adapter (default
40 for CI; the full mode in the README uses 200).
"""

import asyncio
import os
from collections import Counter
from collections.abc import Awaitable, Callable, Generator
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from tenchi.errors import AppError, ErrorDef

from app.features.memory.domain import MemoryLimits, format_timestamp
from app.features.memory.policy import ScopePolicy
from app.features.memory.ports import FileMetadata, Storage, VersionRecord, Write
from app.features.memory.schemas import (
    AppendLine,
    DeleteFile,
    FileEntry,
    FileListing,
    GetMemoryIndex,
    ListPrefix,
    MemoryFile,
    MemoryIndex,
    ReadFile,
    ReplaceFact,
    WriteFile,
)
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.list_prefix import list_prefix
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.port_wiring import open_storage
from app.server.context import AppContext
from app.shared.errors import (
    file_quota_exceeded,
    invalid_argument,
    memory_not_found,
    oversize_write,
    replace_fact_match,
    restricted_scope,
    version_conflict,
)
from app.shared.identity import Identity, parse_grants
from tests.support.contexts import context_over
from tests.support.storage_adapters import ADAPTERS, storage_url

CI_EXAMPLES = 40
EXAMPLES = int(os.environ.get("WENCHANG_MODEL_EXAMPLES", str(CI_EXAMPLES)))
STEPS = 30
MAX_FILE_BYTES = 64
FILE_CAP = 4
PAGE_SIZE = 3
START = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)

CALLERS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "alice": (("user=alice:owner", "team=t-1:member"), "alice-desk"),
    "bob": (("user=bob:owner", "team=t-1:owner"), None),
    "carol": (("user=carol:owner", "team=t-1:guest"), "carol-phone"),
}
WRITE_ROLES = {"team": frozenset({"owner", "member"})}
SEEDED = {
    "user/alice/system/rules.md": "- [system] Be brief.\n",
    "team/t-1/system/guide.md": "- [system] Tea first.\n",
}
SEED_TIME = START - timedelta(days=1)


def mostly[T](usual: list[T], rare: list[T]) -> st.SearchStrategy[T]:
    """Usually a valid value (so state builds up), sometimes a hostile one."""
    return st.sampled_from(usual * 6 + rare)


SCOPES = mostly(["user", "team"], ["org"])
AREAS = mostly(["notes", "notes", "a-b"], ["a", "system", "Bad", ""])
NAMES = mostly(["tea", "tea", "a", "a-b"], ["ü", "..", "a/b", "x\u200by"])
EXPECTED = mostly(["current", "current", "current", "stale"], ["bogus"])
CONTENT = st.one_of(
    st.sampled_from(["", "- [stated] tea\n", "tea tea", "green tea", "x" * 70]),
    st.text(alphabet="abt \n", max_size=12),
)
DESCRIPTIONS = mostly(["", "Tea", "Drinks"], ["two\nlines"])
ALIASES = st.sampled_from([(), ("drinks",), ("drinks", "tea"), ("tea",)])
MAYBE_DESCRIPTION = st.one_of(st.none(), DESCRIPTIONS)
MAYBE_ALIASES = st.one_of(st.none(), ALIASES)
LINES = mostly(
    ["- [stated] Likes tea", "- [observed] a", "- [inferred] tea"],
    ["not a fact", "- [guess] x", "- [stated]  "],
)
OLD = st.one_of(
    mostly(["green", "green", "tea", "a", "stated"], ["t", "tea tea", ""]),
    st.text(alphabet="abt", max_size=3),
)
NEW = st.sampled_from(["oolong", "", "tea tea", "a", "y" * 60])
CURSORS = st.sampled_from([None, None, None, "", "bogus.tag"])

SLOW_IS_FINE = (HealthCheck.too_slow, HealthCheck.data_too_large)
tally: Counter[str] = Counter()
outcomes: Counter[str] = Counter()


class TickingClock:
    """One second later on every call, shared by every caller of a process."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@dataclass(frozen=True, slots=True)
class ModelFile:
    content: str
    description: str
    aliases: tuple[str, ...]
    sources: tuple[str, ...]
    version: str
    last_updated: str


type Model = dict[str, ModelFile]
OPERATIONS = {
    "write": "write_file",
    "append": "append_line",
    "replace": "replace_fact",
    "delete": "delete_file",
}


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """One expected version record; a tombstone's version is not known ahead."""

    operation: str
    actor: str
    file: ModelFile
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class Op:
    kind: str
    caller: str
    scope: str = "user"
    area: str | None = "notes"
    name: str = "tea"
    expected: str | None = None
    content: str = ""
    description: str | None = None
    aliases: tuple[str, ...] | None = None
    line: str = ""
    old: str = ""
    new: str = ""
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class Fail:
    definition: ErrorDef
    details: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Wrote:
    key: str
    file: ModelFile


@dataclass(frozen=True, slots=True)
class Read:
    key: str
    file: ModelFile


@dataclass(frozen=True, slots=True)
class Listed:
    entries: list[tuple[str, ModelFile]]
    more: bool


@dataclass(frozen=True, slots=True)
class Removed:
    key: str


type Prediction = Fail | Wrote | Read | Listed | Removed


def grants_of(caller: str) -> dict[str, tuple[str, str]]:
    pairs = (text.partition("=") for text in CALLERS[caller][0])
    return {scope: (rest.split(":")[0], rest.split(":")[1]) for scope, _, rest in pairs}


def source_of(caller: str) -> str:
    return CALLERS[caller][1] or "http"


def is_segment(text: str) -> bool:
    bad = any(c in "/\\" or ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text)
    return text not in ("", ".", "..") and not bad


def is_slug(text: str) -> bool:
    first = "abcdefghijklmnopqrstuvwxyz0123456789"
    return bool(text) and text[0] in first and all(c in first + "-_" for c in text)


def bad_name_char(name: str) -> bool:
    return any(c in "\u200b\u2028\u2029\ufeff" for c in name)


def is_fact(line: str) -> bool:
    for label in ("stated", "observed", "inferred", "system"):
        head = f"- [{label}] "
        if line.startswith(head) and "\n" not in line:
            return bool(line[len(head) :].strip())
    return False


def matches(content: str, needle: str) -> int:
    return sum(content.startswith(needle, i) for i in range(len(content)))


def merged(stored: tuple[str, ...], added: tuple[str, ...] | None) -> tuple[str, ...]:
    result = list(stored)
    for alias in added or ():
        if alias not in result:
            result.append(alias)
    return tuple(result)


def invalid(argument: str) -> Fail:
    return Fail(invalid_argument, {"argument": argument})


def conflict(file: ModelFile) -> Fail:
    return Fail(version_conflict, {"content": file.content, "version": file.version})


def absent() -> Fail:
    return Fail(memory_not_found, {"reason": "file_absent"})


class Predictor:
    """What the SPEC says an operation does to a model state."""

    def __init__(self, state: Model, quota_state: Model) -> None:
        self.state = state
        self.quota_state = quota_state

    def locate(self, op: Op) -> str | Fail:
        grant = grants_of(op.caller).get(op.scope)
        if grant is None:
            return invalid("scope")
        area = op.area or ""
        if not is_segment(area) or (op.kind != "list" and not is_segment(op.name)):
            return invalid("area" if not is_segment(area) else "name")
        if not is_slug(area):
            return invalid("area")
        if bad_name_char(op.name):
            return invalid("name")
        return f"{op.scope}/{grant[0]}/{area}/{op.name}.md"

    def writable(self, op: Op) -> Fail | None:
        if op.area == "system":
            return Fail(restricted_scope, {"reason": "system_read_only"})
        roles = WRITE_ROLES.get(op.scope)
        if roles is not None and grants_of(op.caller)[op.scope][1] not in roles:
            return Fail(restricted_scope, {"reason": "role_required"})
        return None

    def predict(self, op: Op) -> Prediction:
        if op.kind == "list":
            return self.listing(op)
        if op.kind == "index":
            return self.index(op)
        key = self.locate(op)
        if isinstance(key, Fail):
            return key
        if op.kind == "read":
            current = self.state.get(key)
            return absent() if current is None else Read(key, current)
        denied = self.writable(op)
        if denied is not None:
            return denied
        handlers: dict[str, Callable[[Op, str], Prediction]] = {
            "write": self.write,
            "append": self.append,
            "replace": self.replace,
            "delete": self.delete,
        }
        return handlers[op.kind](op, key)

    def changed(self, op: Op, key: str, content: str, base: ModelFile) -> Prediction:
        if len(content.encode()) > MAX_FILE_BYTES:
            return Fail(oversize_write, {"limit": MAX_FILE_BYTES})
        description = base.description if op.description is None else op.description
        file = ModelFile(
            content,
            description,
            merged(base.aliases, op.aliases),
            tuple(sorted({*base.sources, source_of(op.caller)})),
            "",
            "",
        )
        return Wrote(key, file)

    def write(self, op: Op, key: str) -> Prediction:
        if "\n" in (op.description or ""):
            return invalid("description")
        if len(op.content.encode()) > MAX_FILE_BYTES:
            return Fail(oversize_write, {"limit": MAX_FILE_BYTES})
        current = self.state.get(key)
        sources = (source_of(op.caller),)
        if op.expected is None:
            prefix = key.rsplit("/", 2)[0] + "/"
            held = sum(
                k.startswith(prefix) and "/system/" not in k for k in self.quota_state
            )
            if current is None and held >= FILE_CAP:
                return Fail(file_quota_exceeded, {"limit": FILE_CAP})
            if current is not None:
                return conflict(current)
        else:
            if current is None:
                return absent()
            if current.version != op.expected:
                return conflict(current)
            sources = tuple(sorted({*current.sources, source_of(op.caller)}))
        file = ModelFile(
            op.content, op.description or "", op.aliases or (), sources, "", ""
        )
        return Wrote(key, file)

    def append(self, op: Op, key: str) -> Prediction:
        if not is_fact(op.line):
            return invalid("line")
        if "\n" in (op.description or ""):
            return invalid("description")
        current = self.state.get(key)
        if current is None:
            return absent()
        if current.version != op.expected:
            return conflict(current)
        content = current.content
        if content and not content.endswith("\n"):
            content += "\n"
        return self.changed(op, key, f"{content}{op.line}\n", current)

    def replace(self, op: Op, key: str) -> Prediction:
        if not op.old:
            return invalid("old_string")
        if "\n" in (op.description or ""):
            return invalid("description")
        current = self.state.get(key)
        if current is None:
            return absent()
        count = matches(current.content, op.old)
        if count != 1 and current.version == op.expected:
            return Fail(
                replace_fact_match,
                {
                    "content": current.content,
                    "version": current.version,
                    "match_count": count,
                },
            )
        if count != 1:
            return conflict(current)
        content = current.content.replace(op.old, op.new, 1)
        return self.changed(op, key, content, current)

    def delete(self, op: Op, key: str) -> Prediction:
        current = self.state.get(key)
        if current is None:
            return absent()
        if current.version != op.expected:
            return conflict(current)
        return Removed(key)

    def listing(self, op: Op) -> Prediction:
        grant = grants_of(op.caller).get(op.scope)
        if grant is None:
            return invalid("scope")
        if op.area is not None and not is_slug(op.area):
            return invalid("area")
        if op.cursor:
            return invalid("cursor")
        prefix = f"{op.scope}/{grant[0]}/"
        if op.area is not None:
            prefix += f"{op.area}/"
        entries = sorted(
            (key, file) for key, file in self.state.items() if key.startswith(prefix)
        )
        return Listed(entries, more=False)

    def index(self, op: Op) -> Prediction:
        prefixes = [f"{scope}/{e}/" for scope, (e, _) in grants_of(op.caller).items()]
        rows = [
            (key, file)
            for key, file in self.state.items()
            if any(key.startswith(prefix) for prefix in prefixes)
        ]

        def order(row: tuple[str, ModelFile]) -> tuple[int, float, str]:
            moment = datetime.fromisoformat(row[1].last_updated)
            return (0 if "/system/" in row[0] else 1, -moment.timestamp(), row[0])

        return Listed(sorted(rows, key=order), more=False)


def entry_of(key: str, file: ModelFile) -> FileEntry:
    scope, _, area, name = key.split("/")
    return FileEntry(
        scope=scope,
        area=area,
        name=name.removesuffix(".md"),
        version=file.version,
        description=file.description,
        aliases=list(file.aliases),
        sources=list(file.sources),
        last_updated=file.last_updated,
    )


def compare(
    prediction: Prediction, actual: object, state: Model, seen: dict[str, set[str]]
) -> tuple[str | None, Model]:
    """A divergence message (None when equal) and the model state afterwards."""
    if isinstance(prediction, Fail):
        if not isinstance(actual, AppError):
            return f"expected {prediction.definition.code}, got {actual!r}", state
        wrong = {
            k: actual.details.get(k)
            for k, v in prediction.details.items()
            if actual.details.get(k) != v
        }
        if actual.definition is not prediction.definition or wrong:
            return f"expected {prediction}, got {actual.code} {actual.details}", state
        return None, state
    if isinstance(actual, AppError):
        return f"expected {prediction}, got {actual.code} {actual.details}", state
    if isinstance(prediction, Removed):
        return None, {k: v for k, v in state.items() if k != prediction.key}
    if isinstance(prediction, Listed):
        return _compare_listing(prediction, actual), state
    assert isinstance(actual, MemoryFile)
    expected = entry_of(prediction.key, prediction.file).model_dump()
    got = actual.model_dump()
    if isinstance(prediction, Read):
        wanted = expected | {"content": prediction.file.content}
        return (None if got == wanted else f"read {got} != {wanted}"), state
    fresh = ModelFile(
        actual.content,
        actual.description,
        tuple(actual.aliases),
        tuple(actual.sources),
        actual.version,
        actual.last_updated,
    )
    want = replace(prediction.file, version=fresh.version, last_updated="")
    if replace(fresh, last_updated="") != want or fresh.version in seen.get(
        prediction.key, set()
    ):
        return f"wrote {fresh} but the model says {prediction.file}", state
    return None, state | {prediction.key: fresh}


def _compare_listing(prediction: Listed, actual: object) -> str | None:
    wanted = [entry_of(key, file) for key, file in prediction.entries]
    if isinstance(actual, MemoryIndex):
        if actual.entries != wanted or actual.capped:
            return f"index {actual} != {wanted}"
        return None
    assert isinstance(actual, FileListing)
    if actual.entries != wanted[: len(actual.entries)]:
        return f"listing {actual.entries} != {wanted}"
    if (actual.next_cursor is not None) != (len(wanted) > len(actual.entries)):
        return f"listing cursor {actual.next_cursor!r} with {len(wanted)} entries"
    return None


def ops(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    common: dict[str, st.SearchStrategy[Any]] = {
        "caller": st.sampled_from(sorted(CALLERS)),
        "scope": SCOPES,
        "area": AREAS,
        "name": NAMES,
        "expected": EXPECTED,
        "aim": st.one_of(st.none(), st.integers(0, 99), st.integers(0, 99)),
    }
    extra: dict[str, dict[str, st.SearchStrategy[Any]]] = {
        "read": {},
        "index": {},
        "list": {"area": st.one_of(st.none(), AREAS), "cursor": CURSORS},
        "write": {
            "content": CONTENT,
            "description": DESCRIPTIONS,
            "aliases": ALIASES,
            "expected": mostly(["none", "none", "current"], ["stale"]),
        },
        "append": {
            "line": LINES,
            "description": MAYBE_DESCRIPTION,
            "aliases": MAYBE_ALIASES,
        },
        "replace": {
            "old": OLD,
            "new": NEW,
            "description": MAYBE_DESCRIPTION,
            "aliases": MAYBE_ALIASES,
        },
        "delete": {},
    }
    return st.fixed_dictionaries({"kind": st.just(kind), **common, **extra[kind]})


ANY_OP = st.one_of(
    *(
        ops(kind)
        for kind in ("read", "list", "index", "write", "append", "replace", "delete")
    )
)


def context_for(caller: str, base: AppContext) -> AppContext:
    grants, label = CALLERS[caller]
    return replace(base, identity=Identity(parse_grants(list(grants)), label=label))


async def execute(op: Op, context: AppContext) -> object:
    """Run one operation through its use case; an AppError is a result too."""
    result = await _call(op, context)
    outcome = result.code if isinstance(result, AppError) else "ok"
    outcomes[f"{op.kind} {outcome}"] += 1
    return result


async def _call(op: Op, context: AppContext) -> object:
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "read": lambda: read_file(
            ReadFile(scope=op.scope, area=op.area or "", name=op.name), context
        ),
        "list": lambda: list_prefix(
            ListPrefix(scope=op.scope, area=op.area, cursor=op.cursor), context
        ),
        "index": lambda: get_memory_index(GetMemoryIndex(), context),
        "write": lambda: write_file(
            WriteFile(
                scope=op.scope,
                area=op.area or "",
                name=op.name,
                content=op.content,
                description=op.description or "",
                aliases=list(op.aliases or ()),
                expected_version=op.expected,
            ),
            context,
        ),
        "append": lambda: append_line(
            AppendLine(
                scope=op.scope,
                area=op.area or "",
                name=op.name,
                line=op.line,
                expected_version=op.expected or "",
                aliases=None if op.aliases is None else list(op.aliases),
                description=op.description,
            ),
            context,
        ),
        "replace": lambda: replace_fact(
            ReplaceFact(
                scope=op.scope,
                area=op.area or "",
                name=op.name,
                old_string=op.old,
                new_string=op.new,
                expected_version=op.expected or "",
                aliases=None if op.aliases is None else list(op.aliases),
                description=op.description,
            ),
            context,
        ),
        "delete": lambda: delete_file(
            DeleteFile(
                scope=op.scope,
                area=op.area or "",
                name=op.name,
                expected_version=op.expected or "",
            ),
            context,
        ),
    }
    try:
        return await calls[op.kind]()
    except AppError as exc:
        return exc


class StorageModel(RuleBasedStateMachine):
    """One process (storage, index cache, clock) serving three callers."""

    storage_url = "memory://"

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.stack = AsyncExitStack()
        self.state: Model = {}
        self.seen: dict[str, set[str]] = {}
        self.history: dict[str, list[ModelRecord]] = {}
        storage = self.run(self.stack.enter_async_context(open_storage(self.url())))
        self.base = context_over(
            storage,
            MemoryIndexCache(ttl=10**9),
            cursor_key=b"model-test-cursor-key",
            limits=MemoryLimits(
                max_file_bytes=MAX_FILE_BYTES,
                list_page_size=PAGE_SIZE,
                max_files_per_entity=FILE_CAP,
            ),
            policy=ScopePolicy(write_roles=WRITE_ROLES),
            clock=TickingClock(),
        )

    def url(self) -> str:
        return self.storage_url

    def run[T](self, awaitable: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await awaitable

        return self.loop.run_until_complete(wrapped())

    @property
    def storage(self) -> Storage:
        return self.base.storage

    @initialize(first=ANY_OP, second=ANY_OP)
    def seed_then_race(self, first: dict[str, Any], second: dict[str, Any]) -> None:
        """Seed, then race a pair: every sequence races at least one (a short run
        on a slow adapter, GCS's 3 sequences in CI, would often draw none). The
        seeding writes to storage directly, past the index cache, so it comes
        first."""
        self.seed_system_files()
        self.pair(first, second)

    def seed_system_files(self) -> None:
        for key, content in SEEDED.items():
            meta = FileMetadata("curated", (), ("task",), SEED_TIME)
            version = self.run(self.storage.put(Write(key, content.encode(), meta)))
            stamp = SEED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")
            self.state[key] = ModelFile(
                content, "curated", (), ("task",), version, stamp
            )

    def aimed(self, op: Op, aim: int | None) -> Op:
        """Point ``op`` at an existing file the caller can see, when aimed."""
        grants = grants_of(op.caller)
        visible = [
            key.split("/")
            for key in sorted(self.state)
            if grants.get(key.split("/")[0], ("",))[0] == key.split("/")[1]
            and (op.kind == "read" or "/system/" not in key)
        ]
        if aim is None or not visible:
            return op
        scope, _, area, name = visible[aim % len(visible)]
        return replace(op, scope=scope, area=area, name=name.removesuffix(".md"))

    def resolve(self, raw: dict[str, Any]) -> Op:
        fields = {k: v for k, v in raw.items() if k not in ("expected", "aim")}
        op = self.aimed(Op(**fields), raw.get("aim"))
        grant = grants_of(op.caller).get(op.scope)
        key = f"{op.scope}/{grant[0] if grant else '?'}/{op.area}/{op.name}.md"
        current = self.state.get(key)
        choice = raw.get("expected")
        expected: str | None = {
            "none": None,
            "current": current.version if current else "v-absent",
            "bogus": "not-a-version",
        }.get(choice or "none")
        if choice == "stale":
            older = sorted(self.seen.get(key, set()) - {expected or ""})
            expected = older[0] if older else "stale-version"
        return replace(op, expected=expected)

    def record(self, key_versions: Model) -> None:
        for key, file in key_versions.items():
            self.seen.setdefault(key, set()).add(file.version)

    @rule(raw=ANY_OP)
    def single(self, raw: dict[str, Any]) -> None:
        self.one(raw)

    def one(self, raw: dict[str, Any]) -> None:
        op = self.resolve(raw)
        tally[op.kind] += 1
        actual = self.run(execute(op, context_for(op.caller, self.base)))
        prediction = Predictor(self.state, self.state).predict(op)
        if op.kind == "list" and isinstance(actual, FileListing):
            actual = self.run(self.rest_of_listing(op, actual))
        problem, state = compare(prediction, actual, self.state, self.seen)
        assert problem is None, f"{op}: {problem}"
        self.add_history(op, self.state, state)
        self.state = state
        self.record(state)

    async def rest_of_listing(self, op: Op, first: FileListing) -> object:
        """Follow next_cursor to the end; the whole listing is what is compared."""
        entries, cursor = list(first.entries), first.next_cursor
        context = context_for(op.caller, self.base)
        while cursor is not None:
            page = await list_prefix(
                ListPrefix(scope=op.scope, area=op.area, cursor=cursor), context
            )
            entries.extend(page.entries)
            cursor = page.next_cursor
        return FileListing(entries=entries, next_cursor=None)

    @rule(
        raw=ops("write"),
        scope=st.sampled_from(["user", "team"]),
        name=st.sampled_from(["tea", "a"]),
        content=st.sampled_from(["- [stated] green tea\n", "tea tea", "a", ""]),
    )
    def create(self, raw: dict[str, Any], scope: str, name: str, content: str) -> None:
        """A valid create, so that files accumulate for the other rules."""
        valid = {"scope": scope, "area": "notes", "name": name, "expected": "none"}
        valid |= {"aim": None, "description": "", "content": content}
        self.one(raw | valid)

    @rule(first=ANY_OP, second=ANY_OP)
    def pair(self, first: dict[str, Any], second: dict[str, Any]) -> None:
        ops_ = (self.resolve(first), self.resolve(second))
        tally["concurrent pairs"] += 1
        for op in ops_:
            tally[op.kind] += 1

        async def both() -> list[object]:
            return list(
                await asyncio.gather(
                    *(execute(op, context_for(op.caller, self.base)) for op in ops_)
                )
            )

        results = self.run(both())
        steps = self.linearize(ops_, results)
        for op, before, after in steps:
            self.add_history(op, before, after)
        self.state = steps[-1][2]
        self.record(self.state)

    def linearize(
        self, ops_: tuple[Op, Op], results: list[object]
    ) -> list[tuple[Op, Model, Model]]:
        """The (op, state before, state after) steps of an order that explains it."""
        problems: list[str] = []
        for order in ((0, 1), (1, 0)):
            for quota_from_start in (False, True):
                state: Model | None = self.state
                steps: list[tuple[Op, Model, Model]] = []
                for index in order:
                    assert state is not None
                    quota = self.state if quota_from_start else state
                    prediction = Predictor(state, quota).predict(ops_[index])
                    problem, after = compare(
                        prediction, results[index], state, self.seen
                    )
                    if problem is not None:
                        problems.append(f"order {order}: {problem}")
                        state = None
                        break
                    steps.append((ops_[index], state, after))
                    state = after
                if state is not None:
                    return steps
        raise AssertionError(f"{ops_} -> {results} is not linearizable: {problems}")

    def add_history(self, op: Op, before: Model, after: Model) -> None:
        """The record ``op`` must have left: one per file it changed."""
        for key in sorted(before.keys() | after.keys()):
            old, new = before.get(key), after.get(key)
            if old == new:
                continue
            actor = source_of(op.caller)
            if new is None:
                assert old is not None
                record = ModelRecord("delete_file", actor, old, deleted=True)
            else:
                record = ModelRecord(OPERATIONS[op.kind], actor, new)
            self.history.setdefault(key, []).append(record)

    @invariant()
    def storage_equals_model(self) -> None:
        async def everything() -> Model:
            listed = await self.storage.list_page("", start_after=None, limit=10_000)
            found: Model = {}
            for item in listed:
                stored = await self.storage.get(item.key)
                assert stored is not None, f"{item.key} is listed but cannot be read"
                assert stored.version == item.version, f"{item.key}: list != get"
                assert stored.metadata == item.metadata, f"{item.key}: list != get"
                meta = stored.metadata
                found[item.key] = ModelFile(
                    stored.data.decode(),
                    meta.description,
                    meta.aliases,
                    meta.sources,
                    stored.version,
                    format_timestamp(meta.last_updated),
                )
            return found

        assert self.run(everything()) == self.state

    @invariant()
    def history_equals_model(self) -> None:
        for key, expected in self.history.items():
            records = self.run(self.storage.list_versions(key, after=None, limit=999))
            got = [_recorded(record) for record in records]
            want = [_modelled(record) for record in reversed(expected)]
            assert got == want, f"{key}: history {got} != model {want}"
            for record in records[:2]:
                if not record.deleted:
                    full = self.run(self.storage.get_version(key, record.version))
                    content = expected[-1 - records.index(record)].file.content
                    assert full is not None and full.data == content.encode(), key

    def teardown(self) -> None:
        try:
            self.run(self.stack.aclose())
        finally:
            self.loop.close()


def _recorded(record: VersionRecord) -> tuple[object, ...]:
    meta = record.metadata
    version = None if record.deleted else record.version
    when = None if record.deleted else format_timestamp(meta.last_updated)
    described = (meta.description, meta.aliases, meta.sources, when)
    return (record.operation, record.actor, record.deleted, version, *described)


def _modelled(record: ModelRecord) -> tuple[object, ...]:
    file = record.file
    version = None if record.deleted else file.version
    when = None if record.deleted else file.last_updated
    described = (file.description, file.aliases, file.sources, when)
    return (record.operation, record.actor, record.deleted, version, *described)


SLOW_ADAPTERS = {"gcs": (12, 20), "file": (2, STEPS)}
"""(divisor of the example count, steps) where each step costs a network call."""
GUARANTEES = Path(__file__).parents[1] / "docs" / "guarantees.md"


def plan(examples: int) -> dict[str, tuple[int, int]]:
    """(sequences, steps at most) per adapter for ``examples`` sequences."""
    slow = {kind: SLOW_ADAPTERS.get(kind, (1, STEPS)) for kind in ADAPTERS}
    return {kind: (max(1, examples // d), steps) for kind, (d, steps) in slow.items()}


def planned(examples: int) -> str:
    """What docs/guarantees.md says a run of ``examples`` sequences does."""
    return ", ".join(
        f"{kind}: {sequences} sequences of up to {steps} steps"
        for kind, (sequences, steps) in plan(examples).items()
    )


def test_the_docs_state_what_ci_runs() -> None:
    """The CI mode cell of the model row is this file's own plan at its default."""
    assert planned(CI_EXAMPLES) in GUARANTEES.read_text().replace("\n", " ")


@contextmanager
def fresh_dirs(root: Path) -> Generator[Callable[[], Path]]:
    counter = iter(range(1_000_000))

    def make() -> Path:
        path = root / f"run-{next(counter)}"
        path.mkdir()
        return path

    yield make


@pytest.mark.parametrize("kind", ADAPTERS)
def test_operations_by_several_callers_match_the_reference_model(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Random sequential and concurrent operations never diverge from the model."""
    if kind == "gcs":
        request.getfixturevalue("gcs_emulator")
    sequences, steps = plan(EXAMPLES)[kind]
    ran: list[str] = []
    with fresh_dirs(tmp_path) as make_dir:

        class Machine(StorageModel):
            def url(self) -> str:
                ran.append(kind)  # one fresh store per sequence
                return storage_url(kind, make_dir())

        before = tally.copy()
        run_state_machine_as_test(
            Machine,
            settings=settings(
                max_examples=sequences,
                stateful_step_count=steps,
                deadline=None,
                suppress_health_check=SLOW_IS_FINE,
                database=None,
            ),
        )
    done = tally - before
    pairs = done.pop("concurrent pairs", 0)
    print(
        f"\nmodel ({kind}): {len(ran)} sequences, {done.total()} operations "
        f"({pairs} concurrent pairs)"
    )
    print(sorted(outcomes.items()))
