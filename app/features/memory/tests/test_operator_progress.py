"""The operator tasks' progress bars and counts: purge, sweep, the markdown export
and the importers from other tools, seen by a terminal."""

from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from app.features.memory.schemas import ExportMarkdown, PurgeMemory, SweepExpired
from app.features.memory.use_cases.export_markdown import export_markdown
from app.features.memory.use_cases.import_basic_memory import import_basic_memory
from app.features.memory.use_cases.import_mcp_memory import import_mcp_memory
from app.features.memory.use_cases.purge_memory import purge_memory
from app.features.memory.use_cases.sweep_expired import sweep_expired
from app.infra.memory.storage import MemoryStorage
from app.infra.memory.webhook_store import MemoryWebhookStore
from app.server.context import AppContext
from app.shared.progress import ProgressBar
from tests.support.contexts import with_services

from .conftest import START, create, make_context
from .foreign_samples import basic, mcp
from .scripted_storage import ScriptedStorage, recreate
from .test_expiry import SetClock
from .test_sweep_expired import RewrittenOnErase, expiring


@dataclass
class Bar:
    name: str
    total: int | None
    done: int = 0

    def advance(self, steps: int = 1) -> None:
        self.done += steps


class Terminal:
    """Progress as a terminal shows it: every bar with its name, total and steps."""

    def __init__(self) -> None:
        self.bars: list[Bar] = []

    @contextmanager
    def bar(self, name: str, total: int | None) -> Generator[ProgressBar]:
        shown = Bar(name, total)
        self.bars.append(shown)
        yield shown


class SpyWebhooks(MemoryWebhookStore):
    def __init__(self) -> None:
        super().__init__()
        self.erased: list[str] = []

    async def erase(self, prefix: str) -> None:
        self.erased.append(prefix)
        await super().erase(prefix)


def watched(context: AppContext) -> tuple[AppContext, Terminal]:
    terminal = Terminal()
    return with_services(context, progress=terminal), terminal


async def three_files(context: AppContext) -> None:
    for name in ("tea", "coffee", "milk"):
        await create(context, name=name)


async def test_a_purge_shows_its_files_against_their_count() -> None:
    context, terminal = watched(make_context())
    await three_files(context)

    await purge_memory(PurgeMemory(scope="user", entity_id="alice"), context)
    await purge_memory(
        PurgeMemory(scope="user", entity_id="alice", dry_run=False), context
    )

    assert terminal.bars == [Bar("purge (dry run)", 3, 3), Bar("purge", 3, 3)]


async def test_a_purge_erases_the_entity_s_webhooks() -> None:
    webhooks = SpyWebhooks()
    context = with_services(make_context(), webhooks=webhooks)
    await create(context)

    await purge_memory(
        PurgeMemory(scope="user", entity_id="alice", dry_run=False), context
    )

    assert webhooks.erased == ["user/alice/"]


async def test_a_purge_counts_the_objects_of_every_pass() -> None:
    """One file deleted on the first pass, one lost to a writer, then deleted."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    await create(context, name="coffee")
    await create(context, name="tea")
    storage.races.extend([lambda _: _nothing(), recreate("- [stated] again\n")])

    report = await purge_memory(
        PurgeMemory(scope="user", entity_id="alice", dry_run=False), context
    )

    assert (report.passes, report.objects) == (2, 2)


async def _nothing() -> None:
    return None


async def test_a_sweep_shows_the_files_it_looked_at_with_no_total() -> None:
    clock, storage = SetClock(), MemoryStorage()
    context, terminal = watched(await expiring(clock, storage))
    clock.now = START + timedelta(seconds=61)

    await sweep_expired(SweepExpired(), context)
    await sweep_expired(SweepExpired(dry_run=False), context)

    assert [(bar.name, bar.total) for bar in terminal.bars] == [
        ("sweep (dry run)", None),
        ("sweep", None),
    ]


async def test_a_sweep_counts_every_file_it_kept() -> None:
    clock, storage = SetClock(), RewrittenOnErase()
    context = await expiring(clock, storage)
    await expiring(clock, storage, "user=bob:owner")
    clock.now = START + timedelta(seconds=61)

    report = await sweep_expired(SweepExpired(dry_run=False), context)

    assert (report.files, report.kept) == ([], 2)


async def test_a_markdown_export_shows_its_files_against_their_count(
    tmp_path: Path,
) -> None:
    context, terminal = watched(make_context(surface="task"))
    await three_files(context)
    request = ExportMarkdown(scope="user", entity_id="alice", path=str(tmp_path))

    await export_markdown(request, context)
    await export_markdown(request, context)

    assert terminal.bars == [Bar("export_markdown", 3, 3)] * 2


async def test_the_importers_show_the_files_checked_then_the_files_done() -> None:
    context, terminal = watched(make_context(surface="task"))

    await import_mcp_memory(mcp(dry_run=True), context)
    await import_mcp_memory(mcp(), context)
    await import_basic_memory(basic(), context)

    assert terminal.bars == [
        Bar("check_mcp_memory", 4, 4),
        Bar("import_mcp_memory (dry run)", 4, 4),
        Bar("check_mcp_memory", 4, 4),
        Bar("import_mcp_memory", 4, 4),
        Bar("check_basic_memory", 3, 3),
        Bar("import_basic_memory", 3, 3),
    ]
