"""The memory index: entries ordered by tier and recency, kept within a byte budget."""

from collections import Counter
from collections.abc import Iterable, Sequence
from operator import itemgetter

from pydantic import TypeAdapter

from ..ports import ListedObject
from ..schemas import CappedArea, FileEntry, MemoryIndex
from .keys import SYSTEM_AREA
from .timestamps import epoch_micros
from .views import render_entry

_ENTRY_JSON = TypeAdapter(FileEntry)


def entry_cost(entry: FileEntry) -> int:
    """Bytes of the entry's compact UTF-8 JSON (keys in order, non-ASCII unescaped).

    Pydantic's serializer writes the same bytes as ``json.dumps(...,
    separators=(",", ":"), ensure_ascii=False)``, several times faster.
    """
    return len(_ENTRY_JSON.dump_json(entry))


def _tier(entry: FileEntry, priority: Sequence[str]) -> int:
    if entry.area == SYSTEM_AREA:
        return 0
    if entry.scope in priority:
        return 1 + priority.index(entry.scope)
    return 1 + len(priority)


def build_index(
    listed: Iterable[ListedObject], *, priority: Sequence[str], max_bytes: int
) -> MemoryIndex:
    """Order every entry, keep the prefix that fits the budget, count the rest."""
    ranked: list[tuple[int, int, str, FileEntry]] = []
    for item in listed:
        entry = render_entry(item)
        if entry is not None:
            micros = epoch_micros(item.metadata.last_updated)
            ranked.append((_tier(entry, priority), -micros, item.key, entry))
    ranked.sort(key=itemgetter(0, 1, 2))
    kept: list[FileEntry] = []
    omitted: Counter[tuple[str, str]] = Counter()
    total = 0
    for *_, entry in ranked:
        cost = entry_cost(entry) if not omitted else 0
        if not omitted and total + cost <= max_bytes:
            kept.append(entry)
            total += cost
        else:
            omitted[(entry.scope, entry.area)] += 1
    capped = [
        CappedArea(scope=scope, area=area, omitted=count)
        for (scope, area), count in sorted(omitted.items())
    ]
    return MemoryIndex(entries=kept, capped=capped)
