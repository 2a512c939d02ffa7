"""The filesystem storage keeps no memory per write (no per-write name via pathlib).

On Python 3.12 pathlib interns every path part it parses, and interned strings
are immortal: a ``Path`` built from a per-write name (a body, archive or change
file named by its version or number, a temporary) kept about 600 bytes per
write, rename and delete for the life of the process (``bench.path_names``).
"""

from pathlib import Path

from bench.path_names import retained_per_round

ROUNDS = 150
BOUND = 100
"""Bytes per round: 600 before the fix, about 0 after; the margin is for noise."""


async def test_writes_renames_and_deletes_retain_no_memory(tmp_path: Path) -> None:
    assert await retained_per_round(tmp_path, ROUNDS) < BOUND
