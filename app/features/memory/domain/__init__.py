"""Pure memory rules, one module per concern; the names other layers use."""

from .cursors import decode_cursor, encode_cursor
from .edits import (
    MetadataChanges,
    appended,
    count_matches,
    edited_metadata,
    is_fact_line,
    merged_aliases,
    with_source,
)
from .index import BuiltIndex, build_index, entry_cost
from .keys import (
    SYSTEM_AREA,
    Address,
    address_of,
    entity_prefix,
    entity_prefix_of_key,
    entity_prefix_of_reach,
    file_key,
    split_key,
)
from .limits import MemoryLimits
from .timestamps import format_timestamp, parse_timestamp
from .views import (
    render_entries,
    render_entry,
    render_file,
    render_record,
    render_stored,
)

__all__ = [
    "SYSTEM_AREA",
    "Address",
    "BuiltIndex",
    "MemoryLimits",
    "MetadataChanges",
    "address_of",
    "appended",
    "build_index",
    "count_matches",
    "decode_cursor",
    "edited_metadata",
    "encode_cursor",
    "entity_prefix",
    "entity_prefix_of_key",
    "entity_prefix_of_reach",
    "entry_cost",
    "file_key",
    "format_timestamp",
    "is_fact_line",
    "merged_aliases",
    "parse_timestamp",
    "render_entries",
    "render_entry",
    "render_file",
    "render_record",
    "render_stored",
    "split_key",
    "with_source",
]
