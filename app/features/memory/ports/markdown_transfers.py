"""The storage side of the markdown export and import: one file at a time."""

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.shared.errors import import_conflict_error
from app.shared.progress import ProgressBar

from ..domain.expiry import Expiry
from ..domain.exports import markdown_file
from ..domain.front_matter import file_name, name_of
from ..domain.keys import split_key
from ..schemas import ImportMarkdown, MarkdownImported
from . import Change, Storage, Write
from .import_writes import Restore
from .markdown_tree import MarkdownTree, TreeFile
from .storage_reads import list_batches, live, raise_current_state

MAX_LISTED = 100
"""Names an answer lists at most (an error's or a report's): memory stays bounded."""

type Check[T] = Callable[[TreeFile, bytes], T]


@dataclass(slots=True)
class Tally:
    """Files counted by outcome, and the first few names of each kind listed."""

    counts: dict[str, int] = field(default_factory=dict[str, int])
    names: dict[str, list[str]] = field(default_factory=dict[str, list[str]])

    def add(self, outcome: str, label: str = "") -> None:
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        listed = self.names.setdefault(outcome, [])
        if label and len(listed) < MAX_LISTED:
            listed.append(label)

    def __getitem__(self, outcome: str) -> int:
        return self.counts.get(outcome, 0)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


async def export_tree(
    storage: Storage, prefix: str, tree: MarkdownTree, bar: ProgressBar
) -> Tally:
    """Each file under ``prefix`` written to ``tree`` as it is read: "written",
    "unchanged" (the tree held the bytes) or "unnamed" (too long a name)."""
    tally = Tally()
    try:
        async for batch in list_batches(storage, prefix):
            for listed in batch:
                bar.advance()
                parts, stored = split_key(listed.key), await storage.get(listed.key)
                if parts is None or stored is None:
                    continue
                named = file_name(parts[2])
                if named is None:
                    tally.add("unnamed", f"{parts[1]}/{parts[2]}")
                    continue
                data = markdown_file(stored)
                wrote = await tree.write(TreeFile(parts[1], named), data)
                tally.add("written" if wrote else "unchanged")
    finally:
        await tree.flush()
    return tally


async def checked_tree[T](tree: MarkdownTree, check: Check[T]) -> AsyncIterator[T]:
    """Each ``.md`` file of the tree read and checked, one at a time."""
    for file in tree.files():
        if name_of(file.file) is not None:
            yield check(file, await tree.read(file))


async def import_outcome(storage: Storage, restore: Restore, *, overwrite: bool) -> str:
    """What importing ``restore`` does: "created", "overwritten", "unchanged"
    (storage holds exactly it) or "skipped" (other content, not overwritten)."""
    current = await storage.get(restore.address.key)
    if current is None:
        return "created"
    if (current.data, current.metadata) == (restore.data, restore.metadata):
        return "unchanged"
    return "overwritten" if overwrite else "skipped"


async def write_tree_file(
    storage: Storage, restore: Restore, version: str | None, change: Change
) -> None:
    """Write ``restore`` over what storage holds now, guarded by its version; a
    create keeps ``version`` unless the key's history already holds it."""
    key = restore.address.key
    current = await storage.get(key)
    if current is None and version is not None:
        if await storage.get_version(key, version) is not None:
            version = None
    else:
        version = None
    write = Write(key, restore.data, restore.metadata, change=change, version=version)
    expected = None if current is None else current.version
    if await storage.put_if_version(write, expected) is None:
        await raise_current_state(storage, restore.address)


def require_no_conflicts(tally: Tally) -> None:
    """Mode fail: IMPORT_CONFLICT naming files that exist with other content."""
    if tally["skipped"]:
        raise import_conflict_error(tally.names["skipped"], count=tally["skipped"])


async def import_tree(
    storage: Storage,
    restores: AsyncIterator[tuple[Restore, str | None]],
    change: Change | None,
    bar: ProgressBar,
    *,
    overwrite: bool,
) -> Tally:
    """Each restore's outcome counted; with a ``change`` (not a dry run) each
    created or overwritten file written as it comes."""
    tally = Tally()
    async for restore, version in restores:
        outcome = await import_outcome(storage, restore, overwrite=overwrite)
        if change is not None and outcome in ("created", "overwritten"):
            await write_tree_file(storage, restore, version, change)
        tally.add(outcome, restore.label)
        bar.advance()
    return tally


def import_report(request: ImportMarkdown, tally: Tally) -> MarkdownImported:
    return MarkdownImported(
        scope=request.scope,
        entity_id=request.entity_id,
        path=request.path,
        mode=request.mode,
        dry_run=request.dry_run,
        files=tally.total,
        created=tally["created"],
        overwritten=tally["overwritten"],
        unchanged=tally["unchanged"],
        skipped=tally["skipped"],
    )


@dataclass(frozen=True, slots=True)
class ArchivedFile:
    """One file of a markdown archive: its path in the tree, bytes and time."""

    path: str
    data: bytes
    last_updated: datetime


async def archived_files(
    storage: Storage, prefixes: Sequence[tuple[str, str]], expiry: Expiry
) -> AsyncIterator[ArchivedFile]:
    """The live files of each (scope, entity prefix) as ``export_markdown``
    writes them, one list batch at a time (expired ones and names no file
    system can hold left out)."""
    for scope, prefix in prefixes:
        async for batch in list_batches(storage, prefix):
            for listed in batch:
                parts = split_key(listed.key)
                stored = live(await storage.get(listed.key), expiry)
                named = None if parts is None else file_name(parts[2])
                if parts is None or stored is None or named is None:
                    continue
                path = f"{scope}/{parts[1]}/{named}"
                yield ArchivedFile(
                    path, markdown_file(stored), stored.metadata.last_updated
                )
