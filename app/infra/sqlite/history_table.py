"""The SQLite history table, clustered by key, and its migration from the rowid layout.

Each key's records are one run of a ``WITHOUT ROWID`` table keyed by (key, seq),
``seq`` counting per key: a write's record and its prune touch the key's own
pages, and no separate index is kept. Each record also holds the key's
record count ``n`` and a ``floor`` no later than any of the key's records' dates
(``julianday``), read back from the newest record by the next write's prune.
A database made before this layout (one ``seq`` for the whole table, two
indexes) is copied into it once, in one transaction, by whichever connection
opens it first.
"""

import sqlite3

import aiosqlite

_COLUMNS = (
    "key, seq, n, floor, version, operation, actor, deleted, size, description, "
    "aliases, sources, last_updated, data"
)
_TABLE = """
CREATE TABLE IF NOT EXISTS {name} (
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    n INTEGER NOT NULL,
    floor REAL,
    version TEXT NOT NULL,
    operation TEXT NOT NULL,
    actor TEXT NOT NULL,
    deleted INTEGER NOT NULL,
    size INTEGER NOT NULL,
    description TEXT NOT NULL,
    aliases TEXT NOT NULL,
    sources TEXT NOT NULL,
    last_updated TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (key, seq)
) WITHOUT ROWID
"""
# A moved record's ``n`` is its key's count (what the newest must say) and its
# ``floor`` 0, so the key's first write counts its ages afresh.
_MOVED = "count(*) OVER (PARTITION BY key), 0"
_COPY = (
    f"INSERT INTO memory_history_clustered ({_COLUMNS}) "
    f"SELECT {_COLUMNS.replace('n, floor', _MOVED)} FROM memory_history"
)


async def _layout(connection: aiosqlite.Connection) -> str | None:
    """``clustered``, ``rowid`` (the layout before), or None (no table yet)."""
    rows = list(
        await connection.execute_fetchall(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' "
            "AND name = 'memory_history'"
        )
    )
    if not rows:
        return None
    return "clustered" if "WITHOUT ROWID" in str(rows[0][0]).upper() else "rowid"


async def prepare_history_table(connection: aiosqlite.Connection) -> None:
    """Create the history table, or move an older layout's records into it."""
    if await _layout(connection) != "rowid":
        await connection.execute(_TABLE.format(name="memory_history"))
        return
    # One write transaction: a process opening the file meanwhile waits for it
    # (busy timeout), then finds the table clustered and leaves it be.
    await connection.execute("BEGIN IMMEDIATE")
    try:
        if await _layout(connection) == "rowid":
            await connection.execute(_TABLE.format(name="memory_history_clustered"))
            await connection.execute(_COPY)
            await connection.execute("DROP TABLE memory_history")
            await connection.execute(
                "ALTER TABLE memory_history_clustered RENAME TO memory_history"
            )
        await connection.execute("COMMIT")
    except sqlite3.Error:
        await connection.execute("ROLLBACK")
        raise
