"""A repeated keyed call recognising the write its earlier attempt landed.

A call whose first attempt ended without a known outcome (an outcome-unknown
503) is repeated under the same ``call`` key. That repeat finds the file moved
on, or gone, by the very write it is repeating: it must answer that write,
never conflict with it or apply it again. Only storage whose records keep the
call's key (``Storage.keeps_call_keys``) can tell; elsewhere nothing is looked up.
"""

from collections.abc import Awaitable, Callable

from tenchi.errors import AppError

from ..domain.keys import Address
from . import Storage, VersionRecord

SUPERSEDED = frozenset({"VERSION_CONFLICT", "MEMORY_NOT_FOUND"})
"""What a repeat of a call meets when its first attempt's write landed."""
OWN_LOOKBACK = 20
"""How many of a file's newest records a repeated call searches for its own write."""


def recognises(storage: Storage, call: str) -> bool:
    """Whether a refusal of this call may be over its own landed write."""
    return bool(call) and storage.keeps_call_keys


async def own_write(
    storage: Storage, address: Address, call: str
) -> VersionRecord | None:
    """This call's own change among the file's newest records, with its data."""
    if not recognises(storage, call):
        return None
    records = await storage.list_versions(address.key, after=None, limit=OWN_LOOKBACK)
    for record in records:
        if record.call == call:
            return await storage.get_version(address.key, record.version)
    return None


async def recognising_own_write[T](
    storage: Storage,
    address: Address,
    call: str,
    operation: Callable[[], Awaitable[T]],
    answer: Callable[[VersionRecord], T | None],
) -> T:
    """``operation()``, or ``answer`` of this call's own write if refused over it.

    A refusal in ``SUPERSEDED`` looks the call's own record up; ``answer``
    turns it into the call's result, or None for a record this call cannot
    have made, when the refusal stands (as it does without such a record).
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
