"""The bulk read of the edge table that the in-memory graph is built from.

It runs on a read-only snapshot (:meth:`SqliteStore.reader`) on a thread of its own.
Reading SQLite from Python costs per value, and most of a bulk read is that, so each
edge comes as two values: ``(src - start) << 36 | dst << 4 | kind code`` (dst 0 and
the unknown kind code when dst cannot be held) and the weight as stored.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

SCAN_DTYPE = np.dtype([('packed', np.int64), ('weight', np.float64)])


def unit_extent(db: sqlite3.Connection) -> tuple[int, int]:
    """(largest unit id, number of units) of ``db``."""
    (top, units), = db.execute('SELECT COALESCE(MAX(id), 0), COUNT(*) FROM units').fetchall()
    return int(top), int(units)


def scan_edges(db: sqlite3.Connection, *, kinds: Sequence[str], unknown: int, max_id: int,
               rows_per_read: int, span_bits: int,
               current: Callable[[], bool]) -> Iterator[tuple[int, npt.NDArray[np.void]]]:
    """Every edge with ``1 <= src <= max_id``, in primary-key order, in packed chunks.

    Yields ``(start, chunk)``: ``chunk`` holds the edges of a range of source ids from
    ``start`` (:data:`SCAN_DTYPE`), each range sized to about ``rows_per_read`` edges
    and at most ``2**span_bits`` ids. ``kinds[i]`` is coded ``i``, any other kind
    ``unknown``. Stops early once ``current()`` is False (checked before every read).
    """
    kind_sql = ('CASE kind ' + ' '.join(f"WHEN '{k}' THEN {i}" for i, k in enumerate(kinds))
                + f' ELSE {unknown} END')
    scan_sql = (f'SELECT ((src - ?) << 36) | CASE WHEN dst BETWEEN 1 AND {max_id} '
                f'THEN (dst << 4) | {kind_sql} ELSE {unknown} END, weight '
                'FROM edges WHERE src >= ? AND src < ?')
    # A unit has a few dozen edges: the first range guesses from that.
    start, span = 1, max(1, rows_per_read // 32)
    while start <= max_id:
        if not current():
            return
        span = min(span, 1 << span_bits, max_id + 1 - start)
        chunk = db.execute(scan_sql, (start, start, start + span)).fetchall()
        if chunk:
            yield start, np.fromiter(chunk, dtype=SCAN_DTYPE, count=len(chunk))
            start += span
            span = max(1, span * rows_per_read // len(chunk))
            continue
        # No edge leaves these ids: go on from the next src there is.
        (after,), = db.execute('SELECT MIN(src) FROM edges WHERE src >= ?', (start + span,)).fetchall()
        if after is None:
            break
        start, span = int(after), 2 * span


def unheld_destinations(db: sqlite3.Connection, *, max_id: int) -> npt.NDArray[np.int64]:
    """The dst of every edge whose src is outside ``1..max_id`` (the scan cannot hold them)."""
    return np.asarray([r[0] for r in db.execute(
        'SELECT dst FROM edges WHERE src < 1 UNION SELECT dst FROM edges WHERE src > ?', (max_id,))],
        dtype=np.int64)
