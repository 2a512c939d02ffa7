"""One SQL statement on a SQLite file, through a connection of its own."""

import sqlite3
from pathlib import Path
from typing import Any


def sql(database: Path, statement: str, *parameters: object) -> list[Any]:
    """Run ``statement`` as another process would see the file; its rows."""
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        return connection.execute(statement, parameters).fetchall()
    finally:
        connection.close()


def postings(database: Path, key: str) -> dict[str, int]:
    """The search postings rows of ``key``: term -> counts."""
    return dict(
        sql(database, "SELECT term, counts FROM search_terms WHERE key = ?", key)
    )
