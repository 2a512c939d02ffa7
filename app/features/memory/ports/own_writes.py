"""A repeated keyed call recognising the write its earlier attempt landed.

A call whose first attempt ended without a known outcome (an outcome-unknown
503) is repeated under the same ``call`` key. That repeat finds the file moved
on, or gone, by the very write it is repeating: it must answer that write,
never conflict with it or apply it again. Storage answers which change was the
call's own (``Storage.own_change``): only GCS can tell, elsewhere it answers
None without reading anything. The guarded writes of ``storage_reads`` ask
it, so no use case does.
"""

from collections.abc import Awaitable, Callable

from tenchi.errors import AppError

from ..domain.keys import Address
from . import Storage, StoredObject, VersionRecord

SUPERSEDED = frozenset({"VERSION_CONFLICT", "MEMORY_NOT_FOUND"})
"""What a repeat of a call meets when its first attempt's write landed."""


async def own_write(
    storage: Storage, address: Address, call: str
) -> VersionRecord | None:
    """This call's own landed change of the file, with its data, if storage knows."""
    return await storage.own_change(address.key, call) if call else None


def as_file(record: VersionRecord) -> StoredObject:
    """The file as a change's record (read with its data) left it."""
    return StoredObject(record.data or b"", record.metadata, record.version)


async def recognising_own_write[T](
    storage: Storage,
    address: Address,
    call: str,
    operation: Callable[[], Awaitable[T]],
    answer: Callable[[VersionRecord], T | None],
) -> T:
    """``operation()``, or ``answer`` of this call's own write if refused over it.

    A refusal in ``SUPERSEDED`` asks storage for the call's own record;
    ``answer`` turns it into the call's result, or None for a record this call
    cannot have made, when the refusal stands (as it does without a record).
    """
    try:
        return await operation()
    except AppError as error:
        if error.code not in SUPERSEDED:
            raise
        own = await own_write(storage, address, call)
        result = None if own is None else answer(own)
        if result is None:
            raise
        return result
