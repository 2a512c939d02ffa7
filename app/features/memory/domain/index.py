"""The memory index: entries ordered by tier and recency, kept within a byte budget."""

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter

from pydantic import TypeAdapter

from ..ports import ListedObject
from ..schemas import CappedArea, FileEntry, MemoryIndex
from .keys import SYSTEM_AREA
from .timestamps import epoch_micros
from .views import render_entry

_ENTRY_JSON = FileEntry.__pydantic_serializer__
_CAPPED_JSON = TypeAdapter(list[CappedArea])


def entry_json(entry: FileEntry) -> bytes:
    """The entry's compact UTF-8 JSON (keys in order, non-ASCII unescaped).

    Pydantic's serializer writes the same bytes as ``json.dumps(...,
    separators=(",", ":"), ensure_ascii=False)``, several times faster.
    """
    return _ENTRY_JSON.to_json(entry)


def entry_cost(entry: FileEntry) -> int:
    """Bytes the entry costs of the index budget: its ``entry_json``."""
    return len(entry_json(entry))


@dataclass(frozen=True, slots=True)
class BuiltIndex:
    """An index and its JSON text, written once while its budget was counted.

    ``json`` is exactly the ``MemoryIndex`` model's own serialisation; each
    kept entry was serialised to measure its cost, so the body reuses those
    bytes instead of serialising every entry a second time.
    """

    index: MemoryIndex
    json: bytes


def _tiers(priority: Sequence[str]) -> dict[str, int]:
    """The tier of each prioritised scope: 1 for the first, and so on."""
    tiers: dict[str, int] = {}
    for number, scope in enumerate(priority, start=1):
        tiers.setdefault(scope, number)
    return tiers


def _ranked(
    listed: Iterable[ListedObject], priority: Sequence[str]
) -> list[tuple[int, int, str, FileEntry]]:
    """Every entry with its sort key: tier (system areas first, then scopes by
    priority, then the rest), newest first, then key."""
    tiers, rest = _tiers(priority), 1 + len(priority)
    ranked: list[tuple[int, int, str, FileEntry]] = []
    for item in listed:
        entry = render_entry(item)
        if entry is not None:
            tier = 0 if entry.area == SYSTEM_AREA else tiers.get(entry.scope, rest)
            micros = epoch_micros(item.metadata.last_updated)
            ranked.append((tier, -micros, item.key, entry))
    ranked.sort(key=itemgetter(0, 1, 2))
    return ranked


def build_index(
    listed: Iterable[ListedObject], *, priority: Sequence[str], max_bytes: int
) -> BuiltIndex:
    """Order every entry, keep the prefix that fits the budget, count the rest."""
    kept: list[FileEntry] = []
    texts: list[bytes] = []
    omitted: Counter[tuple[str, str]] = Counter()
    total = 0
    for _, _, _, entry in _ranked(listed, priority):
        if not omitted:
            text = _ENTRY_JSON.to_json(entry)  # entry_json, one call fewer per entry
            if total + len(text) <= max_bytes:
                kept.append(entry)
                texts.append(text)
                total += len(text)
                continue
        omitted[(entry.scope, entry.area)] += 1
    capped = [
        CappedArea(scope=scope, area=area, omitted=count)
        for (scope, area), count in sorted(omitted.items())
    ]
    body = b'{"entries":[%b],"capped":%b}' % (
        b",".join(texts),
        _CAPPED_JSON.dump_json(capped),
    )
    return BuiltIndex(MemoryIndex(entries=kept, capped=capped), body)
