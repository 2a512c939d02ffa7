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
