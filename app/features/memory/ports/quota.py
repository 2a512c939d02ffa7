"""The per-entity file cap, as a create checks it against storage."""

from app.shared.errors import file_quota_exceeded_error, version_conflict_error

from ..domain import SYSTEM_AREA, Address
from . import Storage


async def require_room(storage: Storage, address: Address, cap: int) -> None:
    """Room for one more file under the entity (``cap`` 0: no cap); the system
    area's files are not counted."""
    if not cap:
        return
    prefix = address.entity_prefix
    held = await storage.count(prefix) - await storage.count(f"{prefix}{SYSTEM_AREA}/")
    if held >= cap:
        stored = await storage.get(address.key)
        if stored is not None:  # a create over it conflicts, quota or not
            raise version_conflict_error(
                address.location, stored.data.decode(), stored.version
            )
        raise file_quota_exceeded_error(address.location, cap)
