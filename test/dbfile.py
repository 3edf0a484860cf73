"""Reading a store's database file from the outside, read-only: what is on disk."""

from __future__ import annotations

from pathlib import Path

# One reader of the file for the tests and the benchmarks.
from bench.dbfile import file_rows

__all__ = ['evidence_types', 'file_rows']


def evidence_types(path: Path, insight_id: int) -> list[str]:
    """The types of the units an insight's evidence edges point at."""
    rows = file_rows(path, "SELECT u.type FROM edges e JOIN units u ON u.id = e.dst "
                           "WHERE e.src = ? AND e.kind = 'evidence'", (insight_id,))
    return [str(t) for (t,) in rows]
