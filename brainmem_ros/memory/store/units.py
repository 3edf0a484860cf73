"""Units, their vectors and entity index rows: writing, reading by id, candidate lookups."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from brainmem_ros.memory.config import StoreConfig
from brainmem_ros.memory.store.codec import (
    UnitHead,
    actions_json,
    changes_json,
    entities_json,
    entity_names,
    pose_json,
    row_to_head,
    row_to_unit,
)
from brainmem_ros.memory.store.connection import Connection
from brainmem_ros.memory.store.sql import HEAD_COLUMNS, UNIT_COLUMNS, chunks, filter_sql, qmarks, valid_ids
from brainmem_ros.memory.store.vector_cache import VectorCache, as_stored
from brainmem_ros.memory.threads import end_thread
from brainmem_ros.memory.types import Enrichment, MemoryUnit, UnitFilter

_log = logging.getLogger(__name__)
# Vectors per statement of the bulk read that fills the vector cache after opening:
# small enough that the read never holds the interpreter for long (~6 MB a batch).
_FILL_BATCH = 4096


class UnitRows(Connection):
    """The ``units``, ``vectors`` and ``unit_entities`` tables.

    With ``StoreConfig.vector_cache`` the vectors are also held in memory
    (:class:`~brainmem_ros.memory.store.vector_cache.VectorCache`), read in on a thread
    of its own after opening, over a connection of its own (so no reader or writer
    waits for it), and kept up to date by every insert and delete.
    """

    def __init__(self, path: Path, *, config: StoreConfig | None = None) -> None:
        cfg = config or StoreConfig()
        self.vector_cache: VectorCache | None = VectorCache() if cfg.vector_cache else None
        self._fill_stop = threading.Event()
        self._filler: threading.Thread | None = None
        super().__init__(path, config=cfg)
        if self.vector_cache is not None:
            self._filler = threading.Thread(target=self._fill_vector_cache, args=(self.vector_cache,),
                                            name='brainmem-vector-cache', daemon=True)
            self._filler.start()

    def close(self) -> None:
        """Stop filling the vector cache, then close the store."""
        end_thread(self._filler, self._fill_stop)
        super().close()

    def _fill_vector_cache(self, cache: VectorCache) -> None:
        try:
            db = sqlite3.connect(self._reader_uri, uri=True, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            _log.warning('vectors of %s not held in memory (read from disk instead): %s', self.path, exc)
            return
        try:
            last = 0
            # Each batch is a statement (a read transaction) of its own: a long snapshot
            # would keep checkpoints from shrinking the WAL while the store is written.
            while not self._fill_stop.is_set():
                rows = db.execute('SELECT unit_id, vector FROM vectors WHERE unit_id > ? '
                                  'ORDER BY unit_id LIMIT ?', (last, _FILL_BATCH)).fetchall()
                if not rows:
                    cache.complete.set()
                    return
                ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                blob = b''.join(r[1] for r in rows)
                if len(blob) % (4 * len(rows)):
                    _log.warning('vectors of %s have mixed sizes: not held in memory', self.path)
                    return
                cache.offer(ids, np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1))
                last = int(ids[-1])
        except sqlite3.Error as exc:
            _log.warning('reading the vectors of %s into memory stopped (the rest are read from disk): %s',
                         self.path, exc)
        finally:
            db.close()

    # -- writing ---------------------------------------------------------------------

    def insert_unit(self, unit: MemoryUnit, vector: npt.NDArray[np.float32]) -> int:
        """Insert ``unit`` (its id is ignored) with its vector and entity index rows."""
        with self.atomic() as db:
            pose = unit.pose
            cur = db.execute(
                'INSERT INTO units(stamp, type, episode_id, source, text, entities, entity_names, '
                'actions, state_changes, outcome, valence, importance, strength, access_count, '
                'last_access, protected, marginalized, pose, pose_frame, pose_x, pose_y, '
                'valid_from, valid_until, repeats, enrichment) '
                'VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)',
                (unit.stamp, unit.type.value, unit.episode_id, unit.source, unit.text,
                 entities_json(unit.entities), entity_names(unit.entities),
                 actions_json(unit.actions), changes_json(unit.state_changes),
                 unit.outcome.value, unit.valence, unit.importance, unit.strength,
                 unit.access_count, unit.last_access, int(unit.protected), int(unit.marginalized),
                 pose_json(pose), pose.frame if pose else None, pose.x if pose else None,
                 pose.y if pose else None, unit.valid_from, unit.valid_until, unit.repeats,
                 unit.enrichment.value))
            uid = int(cur.lastrowid or 0)
            db.execute('INSERT INTO vectors(unit_id, vector) VALUES (?, ?)',
                       (uid, np.ascontiguousarray(vector, dtype=np.float32).tobytes()))
            if self.vector_cache is not None:
                self.vector_cache.put(uid, vector)
            db.executemany('INSERT OR IGNORE INTO unit_entities(entity, unit_id) VALUES (?, ?)',
                           [(e.key, uid) for e in unit.entities if e.key])
            return uid

    def update_content(self, unit: MemoryUnit) -> None:
        """Rewrite a unit's extracted content (enrichment); the entity index follows."""
        with self.atomic() as db:
            db.execute(
                'UPDATE units SET entities = ?, entity_names = ?, actions = ?, state_changes = ?, '
                'outcome = ?, valence = ?, importance = ?, enrichment = ? WHERE id = ?',
                (entities_json(unit.entities), entity_names(unit.entities),
                 actions_json(unit.actions), changes_json(unit.state_changes),
                 unit.outcome.value, unit.valence, unit.importance, unit.enrichment.value, unit.id))
            db.execute('DELETE FROM unit_entities WHERE unit_id = ?', (unit.id,))
            db.executemany('INSERT OR IGNORE INTO unit_entities(entity, unit_id) VALUES (?, ?)',
                           [(e.key, unit.id) for e in unit.entities if e.key])

    def set_enrichment(self, uid: int, state: Enrichment, note: str = '') -> None:
        """Record the enrichment state of one unit."""
        with self.atomic() as db:
            db.execute('UPDATE units SET enrichment = ?, enrichment_note = ? WHERE id = ?',
                       (state.value, note[:500], uid))

    def set_fields(self, uid: int, **values: Any) -> None:
        """Update plain columns of one unit (names are fixed by callers, never user input)."""
        cols = ', '.join(f'{k} = ?' for k in values)
        with self.atomic() as db:
            db.execute(f'UPDATE units SET {cols} WHERE id = ?', (*values.values(), uid))

    def set_flag(self, ids: Sequence[int], *, column: str, value: bool) -> None:
        """Set ``marginalized`` or ``protected`` of the given units."""
        if column not in ('marginalized', 'protected'):
            msg = f'not a unit flag: {column!r}'
            raise ValueError(msg)
        with self.atomic() as db:
            db.executemany(f'UPDATE units SET {column} = ? WHERE id = ?', [(int(value), i) for i in ids])

    def delete_units(self, ids: Sequence[int]) -> None:
        """Delete units; their vectors, entity rows, edges and claims go with them (cascade)."""
        with self.atomic() as db:
            db.executemany('DELETE FROM units WHERE id = ?', [(i,) for i in ids])
            if self.vector_cache is not None:
                self.vector_cache.discard(ids)

    # -- reading by id ----------------------------------------------------------------

    def get_units(self, ids: Iterable[int]) -> dict[int, MemoryUnit]:
        """Units by id (missing ids are absent from the result)."""
        out: dict[int, MemoryUnit] = {}
        for chunk in chunks(valid_ids(ids)):
            for row in self._query(f'SELECT {UNIT_COLUMNS} FROM units WHERE id IN ({qmarks(len(chunk))})',
                                  chunk):
                unit = row_to_unit(row)
                out[unit.id] = unit
        return out

    def unit_texts(self, ids: Iterable[int]) -> dict[int, str]:
        """The text of each unit by id (missing ids are absent): no JSON to decode."""
        out: dict[int, str] = {}
        for chunk in chunks(valid_ids(ids)):
            out.update(self._query(f'SELECT id, text FROM units WHERE id IN ({qmarks(len(chunk))})', chunk))
        return out

    def get_unit(self, uid: int) -> MemoryUnit | None:
        """One unit, or None."""
        return self.get_units([uid]).get(uid)

    def unit_heads(self, ids: Iterable[int], *, with_pose: bool = True) -> dict[int, UnitHead]:
        """Ranking columns of units by id (missing ids are absent).

        ``with_pose=False`` leaves every ``pose`` None: decoding and validating a pose
        per unit was a third of this call, and only a Retrieve near a pose needs it.
        """
        out: dict[int, UnitHead] = {}
        pose_column = 'pose' if with_pose else 'NULL'
        for chunk in chunks(list(dict.fromkeys(int(i) for i in ids))):
            for row in self._query(f'SELECT {HEAD_COLUMNS}, {pose_column} FROM units '
                                  f'WHERE id IN ({qmarks(len(chunk))})', chunk):
                head = row_to_head(row)
                out[head.id] = head
        return out

    def vectors(self, ids: Iterable[int]) -> dict[int, npt.NDArray[np.float32]]:
        """Stored vectors by unit id (as the vector cache holds them, when there is one)."""
        cache = self.vector_cache
        if cache is None:
            return self._read_vectors(valid_ids(ids))
        found, missing = cache.get(valid_ids(ids))
        if missing:
            read = self._read_vectors(missing)
            if read and len({v.shape for v in read.values()}) == 1:
                ids_read = np.fromiter(read, dtype=np.int64, count=len(read))
                matrix = np.stack(list(read.values()))
                cache.offer(ids_read, matrix)  # read through: held from now on
                found.update(zip(read, as_stored(matrix), strict=True))
            else:
                found.update(read)  # vectors of mixed sizes: a damaged store, as they are
        return found

    def _read_vectors(self, ids: list[int]) -> dict[int, npt.NDArray[np.float32]]:
        out: dict[int, npt.NDArray[np.float32]] = {}
        for chunk in chunks(ids):
            for uid, blob in self._query(
                    f'SELECT unit_id, vector FROM vectors WHERE unit_id IN ({qmarks(len(chunk))})', chunk):
                out[uid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def iter_vectors(self, *, marginalized: bool, after: int = 0, batch: int = 20000
                     ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        """All vectors of active (or of marginalized) units with an id above ``after``, in id
        order, in batches."""
        last = after
        while True:
            rows = self._query(
                'SELECT v.unit_id, v.vector FROM vectors v JOIN units u ON u.id = v.unit_id '
                'WHERE u.marginalized = ? AND v.unit_id > ? ORDER BY v.unit_id LIMIT ?',
                (int(marginalized), last, batch))
            if not rows:
                return
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vecs = np.frombuffer(b''.join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            yield ids, vecs
            last = int(ids[-1])

    def entity_keys_of(self, ids: Sequence[int]) -> dict[int, set[str]]:
        """Entity keys per unit."""
        out: dict[int, set[str]] = {int(i): set() for i in ids}
        for chunk in chunks(list(out)):
            for key, uid in self._query(
                    f'SELECT entity, unit_id FROM unit_entities WHERE unit_id IN ({qmarks(len(chunk))})',
                    chunk):
                out[uid].add(key)
        return out

    # -- counts and id ranges ---------------------------------------------------------

    def count(self, where: str = '1', params: Sequence[Any] = ()) -> int:
        """Number of units matching a fixed SQL condition (tests; the core uses :meth:`unit_counts`)."""
        return int(self._query(f'SELECT COUNT(*) FROM units WHERE {where}', params)[0][0])

    def unit_counts(self) -> dict[str, int]:
        """Units: ``units``, ``active``, ``marginalized`` and ``protected`` counts."""
        total, active, marginalized, protected = self._query(
            'SELECT COUNT(*), COALESCE(SUM(marginalized = 0), 0), COALESCE(SUM(marginalized = 1), 0), '
            'COALESCE(SUM(protected = 1), 0) FROM units')[0]
        return {'units': int(total), 'active': int(active), 'marginalized': int(marginalized),
                'protected': int(protected)}

    def enrichment_counts(self) -> dict[str, int]:
        """Number of units per enrichment state (states no unit has are absent)."""
        return {str(state): int(n) for state, n in self._query(
            'SELECT enrichment, COUNT(*) FROM units GROUP BY enrichment')}

    def max_id(self) -> int:
        """Largest unit id (0 when empty)."""
        return int(self._query('SELECT COALESCE(MAX(id), 0) FROM units')[0][0])

    def all_ids(self) -> list[int]:
        """Every unit id, in order (export)."""
        return [int(r[0]) for r in self._query('SELECT id FROM units ORDER BY id')]

    def pending_enrichment(self, *, limit: int) -> list[int]:
        """Ids of units whose enrichment is pending or failed, oldest first."""
        return [int(r[0]) for r in self._query(
            "SELECT id FROM units WHERE enrichment IN ('pending', 'failed') ORDER BY id LIMIT ?", (limit,))]

    def recent_posed_ids(self, *, limit: int) -> list[int]:
        """Ids of the newest ``limit`` units that have a pose, newest first."""
        return [int(r[0]) for r in self._query(
            'SELECT id FROM units WHERE pose_frame IS NOT NULL ORDER BY id DESC LIMIT ?', (limit,))]

    # -- candidate lookups (indexes only, never a scan of all units) -------------------

    def units_with_entities(self, keys: Sequence[str], *, per_key: int, active_only: bool = True,
                            unit_filter: UnitFilter | None = None) -> dict[str, list[int]]:
        """Most recent unit ids per entity key (among those ``unit_filter`` lets through)."""
        out: dict[str, list[int]] = {}
        if unit_filter is None:
            cond, params = ('u.marginalized = 0' if active_only else '1'), list[Any]()
        else:
            cond, params = filter_sql(unit_filter)
        for key in dict.fromkeys(keys):
            rows = self._query(
                f'SELECT e.unit_id FROM unit_entities e JOIN units u ON u.id = e.unit_id '
                f'WHERE e.entity = ? AND {cond} ORDER BY e.unit_id DESC LIMIT ?', (key, *params, per_key))
            out[key] = [r[0] for r in rows]
        return out

    def episode_before(self, episode_id: str, stamp: float, *, since: float,
                       limit: int) -> list[tuple[int, float]]:
        """(id, stamp) of the latest units of an episode at or before ``stamp``."""
        return [(r[0], r[1]) for r in self._query(
            'SELECT id, stamp FROM units WHERE episode_id = ? AND stamp <= ? AND stamp >= ? '
            'ORDER BY stamp DESC, id DESC LIMIT ?', (episode_id, stamp, since, limit))]

    def entity_document_counts(self, keys: Sequence[str], *, cap: int = 10000) -> dict[str, int]:
        """Number of units mentioning each entity key (counted up to ``cap``); unknown keys absent."""
        out: dict[str, int] = {}
        for key in dict.fromkeys(keys):
            n = int(self._query('SELECT count(*) FROM (SELECT 1 FROM unit_entities WHERE entity = ? LIMIT ?)',
                               (key, cap))[0][0])
            if n:
                out[key] = n
        return out

    def filtered_ids(self, unit_filter: UnitFilter, *, limit: int) -> list[int] | None:
        """Ids of the units a narrowing filter lets through, or None if more than ``limit``.

        A pose filter is applied here as its bounding box; callers check the distance.
        """
        cond, params = filter_sql(unit_filter)
        rows = self._query(f'SELECT id FROM units u WHERE {cond} LIMIT ?', (*params, limit + 1))
        if len(rows) > limit:
            return None
        return [int(r[0]) for r in rows]
