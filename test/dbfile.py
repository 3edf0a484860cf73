"""Reading a store's database file from the outside, read-only: what is on disk."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def file_rows(path: Path, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of one statement over ``path``, on a read-only connection of its own (not the store's).

    It sees what is committed, WAL included, and can change nothing.
    """
    db = sqlite3.connect(f'{Path(path).resolve().as_uri()}?mode=ro', uri=True)
    try:
        return db.execute(statement, params).fetchall()
    finally:
        db.close()


def evidence_types(path: Path, insight_id: int) -> list[str]:
    """The types of the units an insight's evidence edges point at."""
    rows = file_rows(path, "SELECT u.type FROM edges e JOIN units u ON u.id = e.dst "
                           "WHERE e.src = ? AND e.kind = 'evidence'", (insight_id,))
    return [str(t) for (t,) in rows]
