"""The memory index: entries ordered by tier and recency, kept within a byte budget."""

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

from pydantic import TypeAdapter

from ..ports import ListedObject
from ..schemas import CappedArea, FileEntry, MemoryIndex
from .keys import SYSTEM_AREA, split_key
from .timestamps import epoch_micros
from .views import EntryRow, entry_row

_ENTRIES = TypeAdapter(list[FileEntry])
_ENTRY_JSON = TypeAdapter(FileEntry).serializer


_ROW_JSON = TypeAdapter(EntryRow).serializer
"""Writes a row as ``FileEntry``'s serializer writes its model (the same bytes)."""


def entry_json(entry: FileEntry) -> bytes:
    """The entry's compact UTF-8 JSON (keys in order, non-ASCII unescaped).

    Pydantic's serializer writes the same bytes as ``json.dumps(...,
    separators=(",", ":"), ensure_ascii=False)``, several times faster.
    """
    return _ENTRY_JSON.to_json(entry)


def entry_cost(entry: FileEntry) -> int:
    """Bytes the entry costs of the index budget: its ``entry_json``."""
    return len(entry_json(entry))


def row_json(row: EntryRow) -> bytes:
    """``entry_json`` of the entry ``row`` holds, without building the model."""
    return _ROW_JSON.to_json(row)


@dataclass(frozen=True, slots=True)
class BuiltIndex:
    """An index as plain rows, each with the JSON its budget was counted in.

    ``texts`` holds each kept entry's ``row_json``, in index order: what the
    budget counted, which a server may join into the body instead of
    serialising a model again. ``files`` is the ``area/name`` of each kept
    entry by scope, in index order (what the audit trail records), so nothing
    walks the entries again to find it.
    """

    rows: Sequence[EntryRow]
    capped: list[CappedArea]
    texts: Sequence[bytes]
    files: Mapping[str, list[str]]
    _model: list[MemoryIndex] = field(
        default_factory=list[MemoryIndex], compare=False, repr=False
    )

    @property
    def index(self) -> MemoryIndex:
        """The ``MemoryIndex`` model of the rows, built at its first access."""
        if not self._model:
            entries = _ENTRIES.validate_python(self.rows)
            self._model.append(MemoryIndex(entries=entries, capped=self.capped))
        return self._model[0]

    @property
    def files_served(self) -> Mapping[str, list[str]]:
        """``files``, under the name the audit trail reads a call's files by."""
        return self.files


def _tiers(priority: Sequence[str]) -> dict[str, int]:
    """The tier of each prioritised scope: 1 for the first, and so on."""
    tiers: dict[str, int] = {}
    for number, scope in enumerate(priority, start=1):
        tiers.setdefault(scope, number)
    return tiers


type _Ranked = tuple[int, int, str, tuple[str, str, str], ListedObject]


def _ranked(listed: Iterable[ListedObject], priority: Sequence[str]) -> list[_Ranked]:
    """Every file with its sort key: tier (system areas first, then scopes by
    priority, then the rest), newest first, then key; no entry rendered yet."""
    tiers, rest = _tiers(priority), 1 + len(priority)
    ranked: list[_Ranked] = []
    for item in listed:
        parts = split_key(item.key)
        if parts is not None:
            tier = 0 if parts[1] == SYSTEM_AREA else tiers.get(parts[0], rest)
            micros = epoch_micros(item.metadata.last_updated)
            ranked.append((tier, -micros, item.key, parts, item))
    ranked.sort(key=itemgetter(0, 1, 2))
    return ranked


def build_index(
    listed: Iterable[ListedObject], *, priority: Sequence[str], max_bytes: int
) -> BuiltIndex:
    """Order every entry, keep the prefix that fits the budget, count the rest."""
    rows: list[EntryRow] = []
    texts: list[bytes] = []
    files: dict[str, list[str]] = {}
    omitted: Counter[tuple[str, str]] = Counter()
    total = 0
    for _, _, _, parts, item in _ranked(listed, priority):
        scope, area, name = parts
        if not omitted:
            row = entry_row(parts, item)
            text = _ROW_JSON.to_json(row)  # row_json, one call fewer per entry
            if total + len(text) <= max_bytes:
                rows.append(row)
                texts.append(text)
                total += len(text)
                served = files.get(scope)
                if served is None:
                    files[scope] = served = []
                served.append(f"{area}/{name}")
                continue
        omitted[(scope, area)] += 1
    capped = [
        CappedArea(scope=scope, area=area, omitted=count)
        for (scope, area), count in sorted(omitted.items())
    ]
    return BuiltIndex(rows, capped, texts, files)
