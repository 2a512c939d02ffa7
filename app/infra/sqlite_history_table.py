"""The SQLite history table, clustered by key, and its migration from the rowid layout.

Each key's records are one run of a ``WITHOUT ROWID`` table keyed by (key, seq),
``seq`` counting per key: a write's record and its prune touch the key's own
pages, and no separate index is kept. ``age`` is ``julianday(last_updated)``,
stored so the age limit compares numbers. A database made before this layout
(one ``seq`` for the whole table, two indexes) is copied into it once, in one
transaction, by whichever connection opens it first.
"""

import sqlite3

import aiosqlite

_COLUMNS = (
    "key, seq, age, version, operation, actor, deleted, size, description, "
    "aliases, sources, last_updated, data"
)
_TABLE = """
CREATE TABLE IF NOT EXISTS {name} (
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    age REAL,
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
# ``age`` and the small columns come before ``data``: the age scan reads a
# record's header and ``age`` only, never a long body's overflow pages.
_COPY = (
    f"INSERT INTO memory_history_clustered ({_COLUMNS}) "
    f"SELECT {_COLUMNS.replace('age', 'julianday(last_updated)')} FROM memory_history"
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
