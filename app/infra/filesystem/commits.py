"""After a filesystem write's commit point (the sidecar's rename or unlink).

What follows the commit never fails a write that landed: cleanup is best
effort, and a failure to sync the commit is an outcome unknown (the write is
visible, a crash may undo it), never a plain failure.
"""

import logging
from collections.abc import Callable

from app.infra.filesystem.layout import read_record

logger = logging.getLogger(__name__)


def tidy(step: Callable[[], object]) -> None:
    """Clean up after the commit point: a failure leaves garbage (which scrub
    and the next trim remove), never fails a write that landed."""
    try:
        step()
    except OSError:
        logger.warning("cleanup after a committed write failed", exc_info=True)


def names_version(sidecar: str, version: str) -> bool:
    """Whether ``sidecar`` (possibly) names ``version`` after a failed commit."""
    try:
        record = read_record(sidecar)
    except OSError:
        return True  # unknown: keep the body it may name
    return record is not None and record.entry.version == version
