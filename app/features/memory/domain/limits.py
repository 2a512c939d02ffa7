"""The limits a deployment sets on memory: sizes, budget, page, file cap, lifetimes."""

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    max_file_bytes: int = 16384
    index_max_bytes: int = 65536
    list_page_size: int = 100
    max_files_per_entity: int = 500
    """0 means no cap."""
    scope_priority: tuple[str, ...] = ()
    area_ttl: Mapping[str, int] = field(default_factory=dict[str, int])
    """Seconds a file written to the area lives unless its write says otherwise."""
