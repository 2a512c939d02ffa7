"""How a SQLite history record keeps its content: deflated when that keeps it short.

A record's ``data`` is the file's bytes, or — for content over ``PACK_OVER``
bytes that deflate makes shorter — a raw deflate stream of them. ``size`` is
always the content's length, so a stored ``data`` shorter than ``size`` is
deflated and one of exactly ``size`` bytes is the content itself: records
written before (never deflated) read as they did, with no flag and no migration.
Deflating keeps a record of a file of a few kilobytes on its b-tree page: one
over ~1,000 bytes would spill to an overflow page, which its write allocates
and its prune frees, rewriting the free list and page 1 each time.
"""

import zlib

PACK_OVER = 512
"""Shorter content is kept as it is: its record fits a page anyway."""
# Level 1 and an 8 KiB window with a small hash: a few microseconds for a file
# of kilobytes (the default 32 KiB window's buffers cost more than the deflating).
_LEVEL, _WINDOW, _MEMORY = 1, 13, 3


def pack(data: bytes) -> bytes:
    """``data`` as a record stores it (see the module's docstring)."""
    if len(data) <= PACK_OVER:
        return data
    deflater = zlib.compressobj(_LEVEL, zlib.DEFLATED, -_WINDOW, _MEMORY)
    packed = deflater.compress(data) + deflater.flush()
    return packed if len(packed) < len(data) else data


def unpack(stored: bytes, size: int) -> bytes:
    """The content of a record that stores ``stored`` for ``size`` bytes."""
    return stored if len(stored) == size else zlib.decompress(stored, -15)
