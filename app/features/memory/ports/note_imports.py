"""How an import from another memory tool writes its checked files.

Every file is judged against what storage holds before anything is written
(mode fail refuses then, writing nothing); each write is one guarded put, so a
file is never half-imported, and a file that already holds the same body,
description and aliases is not written again (no new version, no record).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from app.shared.errors import import_conflict_error
from app.shared.progress import Progress, ProgressBar

from ..schemas import ForeignImport, ForeignImportReport, ImportMode
from . import Change, Storage, StoredObject, Write
from .import_writes import ATTEMPTS, Restore
from .storage_reads import raise_current_state


@dataclass(slots=True)
class NoteOutcomes:
    """File names by what the import did (or would do) with them."""

    created: list[str] = field(default_factory=list[str])
    overwritten: list[str] = field(default_factory=list[str])
    unchanged: list[str] = field(default_factory=list[str])
    skipped: list[str] = field(default_factory=list[str])

    def report(self, request: ForeignImport) -> ForeignImportReport:
        return ForeignImportReport(
            scope=request.scope,
            entity_id=request.entity_id,
            area=request.area,
            mode=request.mode,
            dry_run=request.dry_run,
            created=self.created,
            overwritten=self.overwritten,
            unchanged=self.unchanged,
            skipped=self.skipped,
            changed=bool(self.created or self.overwritten),
        )


def _judged(current: StoredObject | None, restore: Restore, mode: ImportMode) -> str:
    if current is None:
        return "created"
    stored, wanted = current.metadata, restore.metadata
    if (current.data, stored.description, stored.aliases, stored.expires_at) == (
        restore.data,
        wanted.description,
        wanted.aliases,
        None,
    ):
        return "unchanged"
    return "skipped" if mode is ImportMode.SKIP else "overwritten"


async def import_notes(
    storage: Storage,
    restores: Sequence[Restore],
    change: Change,
    request: ForeignImport,
    progress: Progress,
) -> NoteOutcomes:
    """Judge every file, then (unless ``dry_run``) write those that change.

    Mode fail with any file holding other content: IMPORT_CONFLICT naming
    them, nothing written (on a dry run too). Names the request's mode and
    dry_run take effect. Progress: a bar ``check_<tool>`` over the files
    judged, then ``import_<tool>`` over the files done (``change.operation``
    names the tool).
    """
    mode, dry_run = request.mode, request.dry_run
    tool = change.operation.removeprefix("memory.import_")
    with progress.bar(f"check_{tool}", len(restores)) as bar:
        plan = [(r, await _read(storage, r, bar)) for r in restores]
    if mode is ImportMode.FAIL:
        differ = [r.label for r, now in plan if _judged(now, r, mode) == "overwritten"]
        if differ:
            raise import_conflict_error(differ)
    outcomes = NoteOutcomes()
    name = f"import_{tool}" + (" (dry run)" if dry_run else "")
    with progress.bar(name, len(plan)) as bar:
        for restore, current in plan:
            outcome = _judged(current, restore, mode)
            if not dry_run and outcome in ("created", "overwritten"):
                outcome = await _write(storage, restore, current, change, mode)
            getattr(outcomes, outcome).append(restore.address.location.name)
            bar.advance()
    return outcomes


async def _read(
    storage: Storage, restore: Restore, bar: ProgressBar
) -> StoredObject | None:
    current = await storage.get(restore.address.key)
    bar.advance()
    return current


async def _write(
    storage: Storage,
    restore: Restore,
    current: StoredObject | None,
    change: Change,
    mode: ImportMode,
) -> str:
    """One guarded put; a file changed meanwhile is judged again and retried."""
    for _ in range(ATTEMPTS):
        outcome = _judged(current, restore, mode)
        if outcome in ("unchanged", "skipped"):
            return outcome
        if current is not None and mode is ImportMode.FAIL:
            raise import_conflict_error([restore.label])
        metadata = restore.metadata
        if current is not None:  # sources only ever grow
            grown = set(current.metadata.sources) | set(metadata.sources)
            metadata = replace(metadata, sources=tuple(sorted(grown)))
        write = Write(restore.address.key, restore.data, metadata, change=change)
        expected = None if current is None else current.version
        if await storage.put_if_version(write, expected) is not None:
            return outcome
        current = await storage.get(restore.address.key)
    await raise_current_state(storage, restore.address)
