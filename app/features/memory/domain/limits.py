"""The limits a deployment sets on memory: file size, index budget, page, file cap."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    max_file_bytes: int = 16384
    index_max_bytes: int = 65536
    list_page_size: int = 100
    max_files_per_entity: int = 500
    """0 means no cap."""
    scope_priority: tuple[str, ...] = ()
