"""Change markers kept as small objects beside the files (filesystem, GCS).

A marker names no entity and holds no content, so a purge leaves nothing of
the entity behind in it; its version is the marker, new at each bump.
"""

from app.infra.change_markers import (
    INITIAL,
    MARKER_KEYS,
    StorageChangeMarkers,
    marker_id,
)
from app.infra.memory.storage import MemoryStorage

PREFIX = "user/alice/"


async def test_a_marker_object_is_empty_and_its_version_is_the_marker() -> None:
    storage = MemoryStorage()
    markers = StorageChangeMarkers(storage)
    assert await markers.read(PREFIX) == INITIAL

    await markers.bump(PREFIX)
    first = await storage.get(MARKER_KEYS + marker_id(PREFIX))
    await markers.bump(PREFIX)
    second = await storage.get(MARKER_KEYS + marker_id(PREFIX))

    assert first is not None and second is not None
    assert (first.data, second.data) == (b"", b"")
    assert PREFIX not in first.metadata.description
    assert first.version != second.version
    assert await markers.read(PREFIX) == second.version
