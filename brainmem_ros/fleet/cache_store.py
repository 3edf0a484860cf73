"""The fleet cache's SQL, in the robot's own SQLite (``memory.db``).

Other robots' shared units, as the subscription (polling, :meth:`FleetSync.sync_once`)
last received them, so that a fleet query answers from yesterday's fleet knowledge
while the server cannot be reached. One row per (robot id, unit id), with the
sender's vector; bounded by ``fleet.cache_max`` (the rows their owners sent longest
ago go first). Versioned apart from the memory schema (meta key
``fleet_cache_schema_version``); the poll cursor is the key (server ``updated_at`` as
the server wrote it, robot id, unit id) of the last row received (meta key
``fleet_cache_cursor``), and the id of the last record of units their owners stopped
sharing (``fleet_cache_unshared_cursor``): those units leave the cache.

Recall over the cache is exact (every cached vector is compared: the cache is small
by construction) with a word-overlap text score standing in for ``ts_rank_cd``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from brainmem_ros.errors import SchemaVersionError
from brainmem_ros.fleet.pg_store import FleetHit, RecallFilter
from brainmem_ros.memory.store import SqliteStore

VERSION_KEY = 'fleet_cache_schema_version'
CACHE_VERSION = 2
_CURSOR_KEY = 'fleet_cache_cursor'
_SYNCED_KEY = 'fleet_cache_synced'
_UNSHARED_KEY = 'fleet_cache_unshared_cursor'
_WORD = re.compile(r'[^\W_]+', re.UNICODE)

_SCHEMA_V1 = (
    'CREATE TABLE IF NOT EXISTS fleet_cache (robot_id TEXT NOT NULL, unit_id INTEGER NOT NULL, '
    'stamp REAL NOT NULL, type TEXT NOT NULL, episode_id TEXT NOT NULL, source TEXT NOT NULL, '
    'text TEXT NOT NULL, entity_names TEXT NOT NULL, entities TEXT NOT NULL, '
    'state_changes TEXT NOT NULL, outcome TEXT NOT NULL, importance REAL NOT NULL, '
    'strength REAL NOT NULL, valence REAL NOT NULL, pose TEXT, marginalized INTEGER NOT NULL, '
    'updated REAL NOT NULL, vector BLOB NOT NULL, cached_at REAL NOT NULL, '
    'PRIMARY KEY (robot_id, unit_id))',
    'CREATE INDEX IF NOT EXISTS fleet_cache_updated ON fleet_cache (updated)',
)
# Version 2: when the owner's later memory superseded the unit (fleet schema 5).
_SCHEMA_V2 = ('ALTER TABLE fleet_cache ADD COLUMN superseded_at REAL',)
_MIGRATIONS: tuple[tuple[str, ...], ...] = (_SCHEMA_V1, _SCHEMA_V2)
assert len(_MIGRATIONS) == CACHE_VERSION


class CachedUnit(NamedTuple):
    """One unit another robot shared, as received from the server."""

    robot_id: str
    unit_id: int
    stamp: float
    type: str
    episode_id: str
    source: str
    text: str
    entity_names: str
    entities: str  # JSON
    state_changes: str  # JSON
    outcome: str
    importance: float
    strength: float
    valence: float
    pose: str | None  # JSON
    marginalized: bool
    updated: float  # when its owner last sent it (POSIX seconds)
    vector: npt.NDArray[np.float32]
    superseded_at: float | None = None  # a later memory of its owner closed what it stated


class CacheCounts(NamedTuple):
    """Size of the cache and when it last received from the server."""

    units: int
    synced: float  # POSIX seconds of the last successful poll (0 = never)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class CacheStore:
    """The fleet cache table of one robot's memory."""

    def __init__(self, store: SqliteStore, *, max_units: int) -> None:
        self.store = store
        self.max_units = max_units
        self._migrate()

    def _migrate(self) -> None:
        version = int(self.store.get_meta(VERSION_KEY, '0'))
        if version > CACHE_VERSION:
            msg = (f'{self.store.path} has fleet cache version {version}, newer than this brainmem '
                   f'({CACHE_VERSION})')
            raise SchemaVersionError(msg)
        if version == CACHE_VERSION or self.store.read_only:
            return
        with self.store.atomic() as db:
            for step in range(version, CACHE_VERSION):
                for statement in _MIGRATIONS[step]:
                    db.execute(statement)
            self.store.set_meta(VERSION_KEY, str(CACHE_VERSION))

    # -- subscription ----------------------------------------------------------------

    def cursor(self) -> tuple[str, str, int] | None:
        """The key (server ``updated_at`` as text, robot id, unit id) of the last row received."""
        value = self.store.get_meta(_CURSOR_KEY, '')
        if not value:
            return None
        ts, rid, uid = value.split('\t')
        return ts, rid, int(uid)

    def put(self, units: Sequence[CachedUnit], *, cursor: tuple[str, str, int] | None, now: float) -> int:
        """Insert or replace units, advance the cursor, enforce the bound; returns evicted count.

        One transaction: a crash leaves the cursor before the rows it covers (the
        next poll receives them again, and replacing a row is harmless).
        """
        with self.store.atomic() as db:
            db.executemany(
                'INSERT OR REPLACE INTO fleet_cache VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '
                '?, ?, ?, ?)',
                [(u.robot_id, u.unit_id, u.stamp, u.type, u.episode_id, u.source, u.text, u.entity_names,
                  u.entities, u.state_changes, u.outcome, u.importance, u.strength, u.valence, u.pose,
                  int(u.marginalized), u.updated, np.asarray(u.vector, dtype=np.float32).tobytes(), now,
                  u.superseded_at)
                 for u in units])
            if cursor is not None:
                self.store.set_meta(_CURSOR_KEY, '\t'.join(map(str, cursor)))
            self.store.set_meta(_SYNCED_KEY, repr(now))
            return self._evict(db)

    def _evict(self, db: Any) -> int:
        count = int(db.execute('SELECT COUNT(*) FROM fleet_cache').fetchone()[0])
        extra = count - self.max_units
        if extra <= 0:
            return 0
        db.execute('DELETE FROM fleet_cache WHERE rowid IN '
                   '(SELECT rowid FROM fleet_cache ORDER BY updated, robot_id, unit_id LIMIT ?)', (extra,))
        return extra

    def forget(self, robot_id: str, unit_ids: Sequence[int]) -> None:
        """Drop cached units (the owner no longer shares them)."""
        with self.store.atomic() as db:
            db.executemany('DELETE FROM fleet_cache WHERE robot_id = ? AND unit_id = ?',
                           [(robot_id, int(u)) for u in unit_ids])

    def unshared_cursor(self) -> int | None:
        """The id of the last unshare record applied (None before the first poll)."""
        value = self.store.get_meta(_UNSHARED_KEY, '')
        return int(value) if value else None

    def forget_unshared(self, records: Sequence[tuple[int, str, int]]) -> int:
        """Drop the units of (record id, robot id, unit id) records and move the cursor past them.

        One transaction: a crash leaves the cursor before the records (applying one
        again is harmless). Returns the number of cached units dropped.
        """
        if not records:
            return 0
        with self.store.atomic() as db:
            before = db.total_changes
            db.executemany('DELETE FROM fleet_cache WHERE robot_id = ? AND unit_id = ?',
                           [(rid, uid) for _, rid, uid in records if uid >= 0])
            dropped = db.total_changes - before
            self.store.set_meta(_UNSHARED_KEY, str(max(r[0] for r in records)))
            return int(dropped)

    # -- recall ----------------------------------------------------------------------

    def recall(self, vector: npt.NDArray[np.float32], text: str, *, me: str, limit: int,
               recall_filter: RecallFilter) -> list[FleetHit]:
        """Cached units nearest to ``vector`` or sharing words with ``text`` (two lists, as the server)."""
        conds = ['robot_id <> ?', f'type IN ({",".join("?" * len(recall_filter.types))})']
        params: list[Any] = [me, *recall_filter.types]
        if not recall_filter.include_marginalized:
            conds.append('marginalized = 0')
        if recall_filter.since is not None:
            conds.append('stamp >= ?')
            params.append(recall_filter.since)
        if recall_filter.until is not None:
            conds.append('stamp <= ?')
            params.append(recall_filter.until)
        with self.store.reading() as db:
            rows = db.execute(
                'SELECT robot_id, unit_id, stamp, type, episode_id, source, text, entities, state_changes, '
                'outcome, importance, strength, valence, pose, marginalized, updated, vector, entity_names, '
                'superseded_at '
                f'FROM fleet_cache WHERE {" AND ".join(conds)}', params).fetchall()
        if not rows:
            return []
        matrix = np.stack([np.frombuffer(r[16], dtype=np.float32) for r in rows])
        cosines = matrix @ np.asarray(vector, dtype=np.float32)
        query_words = _words(text)
        lexical = np.array([len(query_words & _words(f'{r[6]} {r[17]}')) / max(1, len(query_words))
                            for r in rows], dtype=np.float64)
        chosen = set(np.argsort(-cosines)[:limit].tolist())
        if query_words:
            chosen |= {int(i) for i in np.argsort(-lexical)[:limit] if lexical[i] > 0}
        return [FleetHit(str(r[0]), int(r[1]), float(r[2]), str(r[3]), str(r[4]), str(r[5]), str(r[6]),
                         r[7], r[8], str(r[9]), float(r[10]), float(r[11]), float(r[12]), r[13],
                         bool(r[14]), float(r[15]), float(cosines[i]), float(lexical[i]),
                         None if r[18] is None else float(r[18]))
                for i, r in enumerate(rows) if i in chosen]

    def counts(self) -> CacheCounts:
        """How many units the cache holds, and when it last received."""
        with self.store.reading() as db:
            units = int(db.execute('SELECT COUNT(*) FROM fleet_cache').fetchone()[0])
        return CacheCounts(units, float(self.store.get_meta(_SYNCED_KEY, '0')))
