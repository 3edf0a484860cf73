"""Read-only checks of a data directory: SQLite integrity, acknowledged units, index agreement."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
from dbfile import file_rows

DB = 'memory.db'


def crash_image(data_dir: Path, dest: Path) -> Path:
    """Copy the database and its WAL as they are on disk now (what a power cut would leave)."""
    dest.mkdir(parents=True, exist_ok=True)
    for suffix in ('', '-wal'):
        src = data_dir / f'{DB}{suffix}'
        if src.exists():
            shutil.copyfile(src, dest / src.name)
    return dest / DB


def sql(db_path: Path, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of one statement on a plain sqlite3 connection (not brainmem's)."""
    db = sqlite3.connect(db_path)
    try:
        return db.execute(statement, params).fetchall()
    finally:
        db.close()


def integrity(db_path: Path) -> str:
    """``PRAGMA integrity_check`` as one string ('ok' when intact)."""
    return '; '.join(str(r[0]) for r in sql(db_path, 'PRAGMA integrity_check'))


def units_by_id(db_path: Path, *, source: str | None = None) -> dict[int, str]:
    """id -> text of the units (of one source, if given)."""
    if source is None:
        return dict(sql(db_path, 'SELECT id, text FROM units'))  # type: ignore[arg-type]
    return dict(sql(db_path, 'SELECT id, text FROM units WHERE source = ?', (source,)))  # type: ignore[arg-type]


def acknowledged_problems(found: dict[int, str], acked: dict[int, str]) -> list[str]:
    """Acknowledged units that are missing or whose text changed."""
    problems = [f'acknowledged unit {uid} is missing' for uid in acked if uid not in found]
    problems += [f'unit {uid} text changed: {found[uid]!r} != {text!r}'
                 for uid, text in acked.items() if uid in found and found[uid] != text]
    return problems


def index_problems(mem: Any) -> list[str]:
    """Where the hot vector index disagrees with the database (empty list: they agree).

    Every active unit's stored vector must find the unit itself among its nearest
    neighbours, and the index must hold nothing else.
    """
    db = mem.store_db
    active = [r[0] for r in file_rows(db.path, 'SELECT id FROM units WHERE marginalized = 0 ORDER BY id')]
    problems: list[str] = []
    if len(mem.index) != len(active):
        problems.append(f'index holds {len(mem.index)} vectors, the store has {len(active)} active units')
    vectors = db.vectors(active)
    active_set = set(active)
    for start in range(0, len(active), 256):
        chunk = active[start:start + 256]
        _, ids = mem.index.search(np.stack([vectors[i] for i in chunk]).astype(np.float32), 4)
        for uid, row in zip(chunk, ids, strict=True):
            hits = {int(i) for i in row if i >= 0}
            if uid not in hits:
                problems.append(f'active unit {uid} is not found by its own vector')
            stray = hits - active_set
            if stray:
                problems.append(f'index returns ids that are not active units: {sorted(stray)}')
        if len(problems) > 20:
            break
    return problems
