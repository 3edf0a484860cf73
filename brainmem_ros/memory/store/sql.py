"""SQL fragments and helpers shared by the store's modules.

One chunking helper (:func:`chunks`) for every ``IN (...)`` over many ids, one
filter translation (:func:`filter_sql`), and the edge constants every edge query
needs (structural kinds, the effective weight).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from brainmem_ros.memory.types import EdgeKind, UnitFilter, UnitType

T = TypeVar('T')

UNIT_COLUMNS = (
    'id, stamp, type, episode_id, source, text, entities, actions, state_changes, outcome, '
    'valence, importance, strength, access_count, last_access, protected, marginalized, pose, '
    'valid_from, valid_until, repeats, enrichment'
)
HEAD_COLUMNS = ('id, stamp, type, episode_id, importance, strength, valence, last_access, '
                'marginalized, valid_from, valid_until')

MAX_ROWID = 2**63 - 1
# Ids bound per statement: well under SQLite's variable limit.
CHUNK = 500

#: Edge kinds that record structure rather than association: they never decay, so
#: the edge scale does not apply to them.
STRUCTURAL_KINDS = (EdgeKind.SUPERSEDES.value, EdgeKind.EVIDENCE.value)
STRUCTURAL_SQL = '(' + ', '.join(f"'{k}'" for k in STRUCTURAL_KINDS) + ')'

# The effective weight in SQL (parameters: EdgeScale.params). SQLite multiplies
# doubles as numpy does, so the in-memory graph computes the same bits.
EFFECTIVE_SQL = (f'weight * CASE WHEN kind IN {STRUCTURAL_SQL} THEN 1.0 '
                 'WHEN src < ? THEN 1.0 ELSE ? END')


def qmarks(n: int) -> str:
    """``?,?,...`` for ``n`` parameters."""
    return ','.join('?' * n)


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[list[T]]:
    """``items`` in consecutive lists of at most ``size`` (none for an empty sequence)."""
    for start in range(0, len(items), size):
        yield list(items[start:start + size])


def valid_ids(ids: Iterable[int]) -> list[int]:
    """Distinct ids in SQLite's INTEGER range, in their first order.

    Ids outside it cannot exist; binding them would raise OverflowError, so they
    simply count as unknown.
    """
    return [i for i in dict.fromkeys(int(i) for i in ids) if 0 < i <= MAX_ROWID]


def filter_sql(f: UnitFilter) -> tuple[str, list[Any]]:
    """A condition over ``units u`` for ``f`` (a pose filter as its bounding box)."""
    conds: list[str] = []
    params: list[Any] = []
    if not f.include_marginalized:
        conds.append('u.marginalized = 0')
    types = f.allowed_types
    if types != frozenset(UnitType):
        conds.append(f'u.type IN ({qmarks(len(types))})')
        params += sorted(t.value for t in types)
    if f.episode_id is not None:
        conds.append('u.episode_id = ?')
        params.append(f.episode_id)
    if f.since is not None:
        conds.append('u.stamp >= ?')
        params.append(f.since)
    if f.until is not None:
        conds.append('u.stamp <= ?')
        params.append(f.until)
    if f.as_of is not None:
        conds.append('u.stamp <= ? AND u.valid_from <= ? AND (u.valid_until IS NULL OR u.valid_until > ?)')
        params += [f.as_of, f.as_of, f.as_of]
    if f.near is not None and f.radius is not None:
        r = f.radius
        conds.append('u.pose_frame = ? AND u.pose_x BETWEEN ? AND ? AND u.pose_y BETWEEN ? AND ?')
        params += [f.near.frame, f.near.x - r, f.near.x + r, f.near.y - r, f.near.y + r]
    return (' AND '.join(conds) or '1'), params


def split_sql(script: str) -> list[str]:
    """The statements of a script, for running one by one inside a transaction.

    ``executescript()`` would COMMIT the caller's transaction.
    """
    statements: list[str] = []
    buf: list[str] = []
    for line in script.splitlines():
        buf.append(line)
        joined = '\n'.join(buf).strip()
        if joined.endswith(';') and sqlite3.complete_statement(joined):
            statements.append(joined)
            buf = []
    if '\n'.join(buf).strip():
        statements.append('\n'.join(buf).strip())
    return statements
