"""SQLite store: the source of truth for units, vectors, edges and facts.

One connection guarded by one re-entrant lock: the node serves callbacks from
several threads, and SQLite allows a single writer anyway. Every write happens
inside :meth:`SqliteStore.atomic`, so a unit acknowledged to a caller is on disk.

Faults surface as :class:`StoreError` with SQLite's reason (disk full, read-only
file system, malformed file), never as a raw ``sqlite3`` exception. A data
directory that cannot be written (read-only mount) still opens, read-only: recall
keeps working and every write is refused with a message.

Edge changes can be watched (:meth:`SqliteStore.watch_edges`): the in-memory graph
of :mod:`brainmem_ros.memory.adjacency` is told which units' edges changed after
every transaction, however the change was made.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from brainmem_ros.errors import SchemaVersionError, StoreError
from brainmem_ros.memory.config import StoreConfig
from brainmem_ros.memory.schema import MIGRATIONS, SCHEMA_VERSION
from brainmem_ros.memory.types import (
    Edge,
    EdgeKind,
    Enrichment,
    Entity,
    MemoryUnit,
    Outcome,
    Pose,
    StateChange,
    UnitFilter,
    UnitType,
)

_UNIT_COLUMNS = (
    'id, stamp, type, episode_id, source, text, entities, actions, state_changes, outcome, '
    'valence, importance, strength, access_count, last_access, protected, marginalized, pose, '
    'valid_from, valid_until, repeats, enrichment'
)


def _entities_json(entities: Sequence[Entity]) -> str:
    return json.dumps([[e.name, e.type, [list(a) for a in e.attributes]] for e in entities])


def _changes_json(changes: Sequence[StateChange]) -> str:
    return json.dumps([[c.object, c.attribute, c.before, c.after] for c in changes])


def _pose_json(pose: Pose | None) -> str | None:
    if pose is None:
        return None
    return json.dumps([pose.x, pose.y, pose.z, pose.qx, pose.qy, pose.qz, pose.qw, pose.frame])


def _row_to_unit(row: sqlite3.Row | tuple[Any, ...]) -> MemoryUnit:
    (uid, stamp, utype, episode, source, text, entities, actions, changes, outcome, valence,
     importance, strength, access_count, last_access, protected, marginalized, pose,
     valid_from, valid_until, repeats, enrichment) = row
    pose_value = None
    if pose is not None:
        x, y, z, qx, qy, qz, qw, frame = json.loads(pose)
        pose_value = Pose(x, y, z, qx, qy, qz, qw, frame)
    return MemoryUnit(
        id=uid, stamp=stamp, text=text, type=UnitType(utype), episode_id=episode, source=source,
        entities=tuple(Entity(n, t, tuple((k, v) for k, v in a)) for n, t, a in json.loads(entities)),
        actions=tuple(json.loads(actions)),
        state_changes=tuple(StateChange(*c) for c in json.loads(changes)),
        outcome=Outcome(outcome), valence=valence, importance=importance, strength=strength,
        access_count=access_count, last_access=last_access, protected=bool(protected),
        marginalized=bool(marginalized), pose=pose_value, valid_from=valid_from,
        valid_until=valid_until, repeats=repeats, enrichment=Enrichment(enrichment),
    )


class UnitHead(NamedTuple):
    """The columns retrieval filters and ranks by: no JSON to decode, no entity objects."""

    id: int
    stamp: float
    type: UnitType
    episode_id: str
    importance: float
    strength: float
    valence: float
    last_access: float
    marginalized: bool
    valid_from: float
    valid_until: float | None
    pose: Pose | None


def _qmarks(n: int) -> str:
    return ','.join('?' * n)


def _filter_sql(f: UnitFilter) -> tuple[str, list[Any]]:
    """A condition over ``units u`` for ``f`` (a pose filter as its bounding box)."""
    conds: list[str] = []
    params: list[Any] = []
    if not f.include_marginalized:
        conds.append('u.marginalized = 0')
    types = f.allowed_types
    if types != frozenset(UnitType):
        conds.append(f'u.type IN ({_qmarks(len(types))})')
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


_MAX_ROWID = 2**63 - 1
# Document counts of query words in a read-only store are counted up to this.
_COUNT_CAP = 10000
_PRIVATE = 0o600
_log = logging.getLogger(__name__)


def _valid_ids(ids: Iterable[int]) -> list[int]:
    # Ids outside SQLite's INTEGER range cannot exist; binding them would raise
    # OverflowError, so they simply count as unknown.
    return [i for i in dict.fromkeys(int(i) for i in ids) if 0 < i <= _MAX_ROWID]


#: Told the ids of units whose edges changed (``None``: possibly every unit's). A
#: negative id ``-u`` says that unit ``u`` has (or had) a structural edge.
EdgeListener = Callable[[frozenset[int] | None], None]

#: Edge kinds that record structure rather than association: they never decay, so
#: the edge scale does not apply to them.
STRUCTURAL_KINDS = (EdgeKind.SUPERSEDES.value, EdgeKind.EVIDENCE.value)
_STRUCTURAL_SQL = '(' + ', '.join(f"'{k}'" for k in STRUCTURAL_KINDS) + ')'
_EDGE_SCALE_KEY = 'edge_scale'


def edge_scale_of(db: sqlite3.Connection) -> EdgeScale:
    """The edge scale as ``db`` sees it (a reader's snapshot)."""
    row = db.execute('SELECT value FROM meta WHERE key = ?', (_EDGE_SCALE_KEY,)).fetchone()
    return EdgeScale.parse(str(row[0]) if row else '')


@dataclass(frozen=True)
class EdgeScale:
    """The factor association edges are read with: effective weight = stored weight x factor.

    Decaying every association edge is one write of ``scale``, not a rewrite of the
    edge table. ``below`` is 0 except while a renormalisation is under way
    (:meth:`SqliteStore.renormalise_edges`): edges with ``src < below`` are rewritten
    already and read as stored, as structural edges always are.
    """

    scale: float = 1.0
    below: int = 0

    def factor(self, src: int, kind: str) -> float:
        """The factor of one edge."""
        return 1.0 if kind in STRUCTURAL_KINDS or src < self.below else self.scale

    @property
    def params(self) -> tuple[int, float]:
        """The parameters of :data:`_EFFECTIVE_SQL`, in order."""
        return (self.below, self.scale)

    @classmethod
    def parse(cls, raw: str) -> EdgeScale:
        """The scale stored in meta ('' before the first decay)."""
        if not raw:
            return cls()
        c = json.loads(raw)
        return cls(float(c['scale']), int(c['below']))

    def dump(self) -> str:
        """The meta value."""
        return json.dumps({'scale': self.scale, 'below': self.below})


# The effective weight in SQL (parameters: EdgeScale.params). SQLite multiplies
# doubles as numpy does, so the in-memory graph computes the same bits.
_EFFECTIVE_SQL = (f'weight * CASE WHEN kind IN {_STRUCTURAL_SQL} THEN 1.0 '
                  'WHEN src < ? THEN 1.0 ELSE ? END')

# Edge changes are recorded by TEMP triggers: they belong to this connection only
# (nothing is written to the file) and see every change made through it -- the
# store's methods, raw SQL in dynamics, deletes cascading from units -- as part of
# the transaction, so a rollback takes its records back with it.
_TOUCHED = 'temp.edges_touched'
_EDGE_TRIGGERS = {
    'edges_touched_insert': 'AFTER INSERT ON main.edges BEGIN '
                            'INSERT INTO edges_touched VALUES (new.src), (new.dst); END',
    'edges_touched_update': 'AFTER UPDATE ON main.edges BEGIN INSERT INTO edges_touched '
                            'VALUES (old.src), (old.dst), (new.src), (new.dst); END',
    'edges_touched_delete': 'AFTER DELETE ON main.edges BEGIN '
                            'INSERT INTO edges_touched VALUES (old.src), (old.dst); END',
    # A scale change moves structural edges against the others: the in-memory graph
    # must know which units have any, held or not.
    'edges_touched_structural': f'AFTER INSERT ON main.edges WHEN new.kind IN {_STRUCTURAL_SQL} '
                                'BEGIN INSERT INTO edges_touched VALUES (-new.src), (-new.dst); END',
}


def _make_private(path: Path) -> None:
    # A file copied in with a looser mode (or left by an older version) is
    # tightened: memories can be private (who lives where, what they said).
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if mode & 0o077:
        try:
            os.chmod(path, _PRIVATE)
        except PermissionError as exc:
            _log.warning('cannot make %s private (mode %o): %s', path, mode, exc.strerror)


def _uri(path: Path, **params: str) -> str:
    quoted = str(path.resolve()).replace('%', '%25').replace('?', '%3f').replace('#', '%23')
    return f'file:{quoted}?' + '&'.join(f'{k}={v}' for k, v in params.items())


class SqliteStore:
    """Units, vectors, edges and facts in one SQLite file (WAL)."""

    def __init__(self, path: Path, *, config: StoreConfig | None = None) -> None:
        self.path = Path(path)
        self.config = config or StoreConfig()
        self._lock = threading.RLock()
        self._depth = 0
        self._edge_listeners: list[EdgeListener] = []
        self._watching = False  # the edge triggers are installed
        self._edges_rewritten = False
        # term_document_counts' temporary tables: None not yet made, True made, False
        # impossible (a read-only store).
        self._term_tables: bool | None = None
        self._reader_uri = _uri(self.path, mode='ro')  # for reader(): never writes
        #: Why the store refuses writes ('' when it is writable).
        self.read_only_reason = ''
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            msg = f'cannot create the data directory {self.path.parent}: {exc.strerror}'
            raise StoreError(msg) from None
        if not os.access(self.path.parent, os.W_OK) or \
                (self.path.exists() and not os.access(self.path, os.W_OK)):
            self._open_read_only()
            return
        try:
            if not self.path.exists():
                # Create the file 0600 ourselves: sqlite would use the umask. Its
                # -wal and -shm files inherit the database file's mode.
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, _PRIVATE))
            for suffix in ('', '-wal', '-shm'):
                _make_private(Path(f'{self.path}{suffix}'))
        except OSError as exc:
            msg = f'cannot create memory store {self.path}: {exc.strerror}'
            raise StoreError(msg) from None
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute(f'PRAGMA busy_timeout = {int(self.config.busy_timeout_ms)}')
            mode = self._db.execute('PRAGMA journal_mode = WAL').fetchone()[0]
            self._db.execute(f'PRAGMA synchronous = {self.config.synchronous}')
            self._db.execute('PRAGMA foreign_keys = ON')
            self._db.execute('PRAGMA cache_size = -65536')
        except sqlite3.Error as exc:
            msg = f'cannot open memory store {self.path}: {exc}'
            raise StoreError(msg) from None
        if mode.lower() != 'wal':
            msg = f'cannot put {self.path} in WAL mode (got {mode})'
            raise StoreError(msg)
        self._migrate()

    def _open_read_only(self) -> None:
        if not self.path.exists():
            msg = f'cannot create memory store {self.path}: the data directory is not writable'
            raise StoreError(msg)
        self.read_only_reason = f'the data directory {self.path.parent} is not writable'
        wal = Path(f'{self.path}-wal')
        # Without a WAL holding commits, the main file is the whole truth and can be
        # read as immutable (SQLite could not create its -shm file here anyway).
        # With one, SQLite reads it read-only; it never skips a committed unit.
        pending = wal.exists() and wal.stat().st_size > 0
        uri = _uri(self.path, mode='ro') if pending else _uri(self.path, mode='ro', immutable='1')
        self._reader_uri = uri
        try:
            self._db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            self._db.execute(f'PRAGMA busy_timeout = {int(self.config.busy_timeout_ms)}')
            version = self._db.execute('PRAGMA user_version').fetchone()[0]
        except sqlite3.Error as exc:
            msg = f'cannot open memory store {self.path} read-only: {exc}'
            if pending and not Path(f'{self.path}-shm').exists():
                msg += ('; its -wal holds commits that SQLite cannot read without a -shm file, '
                        'which a read-only directory cannot get: mount it writable once to recover')
            raise StoreError(msg) from None
        self._check_version(version)
        if version != SCHEMA_VERSION:
            msg = (f'{self.path} has schema version {version} and needs an upgrade to '
                   f'{SCHEMA_VERSION}, but {self.read_only_reason}')
            raise StoreError(msg)
        _log.warning('memory store %s opened read-only: %s', self.path, self.read_only_reason)

    @property
    def read_only(self) -> bool:
        """True when the store was opened read-only (writes raise StoreError)."""
        return bool(self.read_only_reason)

    # -- lifecycle -------------------------------------------------------------------

    def _check_version(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            msg = (f'{self.path} has schema version {version}, newer than this brainmem '
                   f'({SCHEMA_VERSION}); upgrade brainmem_ros or use another data directory')
            raise SchemaVersionError(msg)

    def _migrate(self) -> None:
        try:
            version = self._db.execute('PRAGMA user_version').fetchone()[0]
        except sqlite3.DatabaseError as exc:
            msg = f'{self.path} is not a readable brainmem database: {exc}'
            raise StoreError(msg) from None
        self._check_version(version)
        with self.atomic():
            for step in range(version, SCHEMA_VERSION):
                for statement in _split_sql(MIGRATIONS[step]):
                    self._db.execute(statement)
            if version != SCHEMA_VERSION:
                self._db.execute(f'PRAGMA user_version = {SCHEMA_VERSION}')

    def close(self) -> None:
        """Checkpoint the WAL and close."""
        with self._lock:
            if not self.read_only:
                try:
                    self._db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
                except sqlite3.Error as exc:
                    # A full or read-only disk must not stop a clean close: the
                    # WAL still holds every commit and is replayed on next open.
                    _log.warning('WAL checkpoint of %s failed on close: %s', self.path, exc)
            self._db.close()

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """One transaction (nested calls join the outer one); rolls back on any error.

        SQLite failures inside the block (disk full, I/O error, read-only file)
        leave as :class:`StoreError`; nothing of the transaction is kept.
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self._db
                finally:
                    self._depth -= 1
                return
            if self.read_only:
                msg = f'cannot write to memory store {self.path}: {self.read_only_reason}'
                raise StoreError(msg)
            try:
                self._db.execute('BEGIN IMMEDIATE')
            except sqlite3.Error as exc:
                msg = f'cannot write to memory store: {exc}'
                raise StoreError(msg) from None
            self._depth = 1
            try:
                try:
                    yield self._db
                except sqlite3.Error as exc:
                    self._depth = 0
                    self._rollback()
                    msg = f'cannot write to memory store: {exc}'
                    raise StoreError(msg) from None
                except BaseException:
                    self._depth = 0
                    self._rollback()
                    raise
                self._depth = 0
                try:
                    self._db.execute('COMMIT')
                except sqlite3.Error as exc:
                    self._rollback()
                    msg = f'cannot write to memory store: {exc}'
                    raise StoreError(msg) from None
            finally:
                # Committed or rolled back, still under the lock: edge listeners are
                # up to date before any other thread can read the store.
                self.settle_edges()

    @property
    def lock(self) -> threading.RLock:
        """The store's lock: held, no other thread commits (or reads) in between."""
        return self._lock

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`atomic` on the thread that holds the lock."""
        with self._lock:
            return self._depth > 0

    def _rollback(self) -> None:
        # SQLite may already have rolled back by itself (disk full, I/O error);
        # a second ROLLBACK would raise and hide the original error.
        if self._db.in_transaction:
            try:
                self._db.execute('ROLLBACK')
            except sqlite3.Error as exc:
                _log.warning('rollback of %s failed: %s', self.path, exc)

    @contextmanager
    def reader(self) -> Iterator[sqlite3.Connection]:
        """A second connection, read-only, in one read transaction: a snapshot of the store.

        For long reads on another thread (the in-memory graph's bulk read): they take
        no lock, hold up no writer (WAL), and see nothing committed after their first
        statement. SQLite failures leave as :class:`StoreError`.
        """
        try:
            db = sqlite3.connect(self._reader_uri, uri=True, isolation_level=None,
                                 check_same_thread=False)
        except sqlite3.Error as exc:
            msg = f'cannot open a reader of memory store {self.path}: {exc}'
            raise StoreError(msg) from None
        try:
            db.execute(f'PRAGMA busy_timeout = {int(self.config.busy_timeout_ms)}')
            db.execute('BEGIN')
            yield db
        except sqlite3.Error as exc:
            msg = f'memory store read failed: {exc}'
            raise StoreError(msg) from None
        finally:
            db.close()

    def integrity_problems(self, *, quick: bool = False) -> list[str]:
        """What ``PRAGMA integrity_check`` (or ``quick_check``) finds; [] when intact."""
        pragma = 'quick_check' if quick else 'integrity_check'
        rows = self.query(f'PRAGMA {pragma}')
        found = [str(r[0]) for r in rows]
        return [] if found == ['ok'] else found

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read statement under the lock."""
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                msg = f'memory store read failed: {exc}'
                raise StoreError(msg) from None

    # -- meta ------------------------------------------------------------------------

    def get_meta(self, key: str, default: str = '') -> str:
        """A value of the meta table."""
        rows = self.query('SELECT value FROM meta WHERE key = ?', (key,))
        return str(rows[0][0]) if rows else default

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the meta table (inside the current transaction, if any)."""
        with self.atomic() as db:
            db.execute('INSERT INTO meta(key, value) VALUES (?, ?) '
                       'ON CONFLICT(key) DO UPDATE SET value = excluded.value', (key, value))

    def bump_generation(self) -> int:
        """Mark a change of the hot vector set; the index file records which it reflects.

        A generation is a counter (high bits) plus 32 random bits, so it is never
        reused: not after a lost ``-wal`` turned the counter back, and not by
        another robot's store whose counter happens to be equal. An index file
        therefore matches only the exact store state it was saved from.
        """
        with self.atomic():
            count = int(self.get_meta('index_generation', '0')) >> 32
            gen = ((count + 1) << 32) | secrets.randbits(32)
            self.set_meta('index_generation', str(gen))
            return gen

    # -- units -----------------------------------------------------------------------

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
                 _entities_json(unit.entities), ' '.join(e.name for e in unit.entities),
                 json.dumps(list(unit.actions)), _changes_json(unit.state_changes),
                 unit.outcome.value, unit.valence, unit.importance, unit.strength,
                 unit.access_count, unit.last_access, int(unit.protected), int(unit.marginalized),
                 _pose_json(pose), pose.frame if pose else None, pose.x if pose else None,
                 pose.y if pose else None, unit.valid_from, unit.valid_until, unit.repeats,
                 unit.enrichment.value))
            uid = int(cur.lastrowid or 0)
            db.execute('INSERT INTO vectors(unit_id, vector) VALUES (?, ?)',
                       (uid, np.ascontiguousarray(vector, dtype=np.float32).tobytes()))
            db.executemany('INSERT OR IGNORE INTO unit_entities(entity, unit_id) VALUES (?, ?)',
                           [(e.key, uid) for e in unit.entities if e.key])
            return uid

    def update_content(self, unit: MemoryUnit) -> None:
        """Rewrite a unit's extracted content (enrichment); the entity index follows."""
        with self.atomic() as db:
            db.execute(
                'UPDATE units SET entities = ?, entity_names = ?, actions = ?, state_changes = ?, '
                'outcome = ?, valence = ?, importance = ?, enrichment = ? WHERE id = ?',
                (_entities_json(unit.entities), ' '.join(e.name for e in unit.entities),
                 json.dumps(list(unit.actions)), _changes_json(unit.state_changes),
                 unit.outcome.value, unit.valence, unit.importance, unit.enrichment.value, unit.id))
            db.execute('DELETE FROM unit_entities WHERE unit_id = ?', (unit.id,))
            db.executemany('INSERT OR IGNORE INTO unit_entities(entity, unit_id) VALUES (?, ?)',
                           [(e.key, unit.id) for e in unit.entities if e.key])

    def set_enrichment(self, uid: int, state: Enrichment, note: str = '') -> None:
        """Record the enrichment state of one unit."""
        with self.atomic() as db:
            db.execute('UPDATE units SET enrichment = ?, enrichment_note = ? WHERE id = ?',
                       (state.value, note[:500], uid))

    def get_units(self, ids: Iterable[int]) -> dict[int, MemoryUnit]:
        """Units by id (missing ids are absent from the result)."""
        out: dict[int, MemoryUnit] = {}
        id_list = _valid_ids(ids)
        for start in range(0, len(id_list), 500):
            chunk = id_list[start:start + 500]
            for row in self.query(f'SELECT {_UNIT_COLUMNS} FROM units WHERE id IN ({_qmarks(len(chunk))})',
                                  chunk):
                unit = _row_to_unit(row)
                out[unit.id] = unit
        return out

    def unit_heads(self, ids: Iterable[int], *, with_pose: bool = True) -> dict[int, UnitHead]:
        """Ranking columns of units by id (missing ids are absent).

        ``with_pose=False`` leaves every ``pose`` None: decoding and validating a pose
        per unit was a third of this call, and only a Retrieve near a pose needs it.
        """
        out: dict[int, UnitHead] = {}
        id_list = list(dict.fromkeys(int(i) for i in ids))
        pose_column = 'pose' if with_pose else 'NULL'
        for start in range(0, len(id_list), 500):
            chunk = id_list[start:start + 500]
            for (uid, stamp, utype, episode, importance, strength, valence, last_access, marginalized,
                 valid_from, valid_until, pose) in self.query(
                    'SELECT id, stamp, type, episode_id, importance, strength, valence, last_access, '
                    f'marginalized, valid_from, valid_until, {pose_column} FROM units '
                    f'WHERE id IN ({_qmarks(len(chunk))})', chunk):
                pose_value = None
                if pose is not None:
                    x, y, z, qx, qy, qz, qw, frame = json.loads(pose)
                    pose_value = Pose(x, y, z, qx, qy, qz, qw, frame)
                out[uid] = UnitHead(uid, stamp, UnitType(utype), episode, importance, strength, valence,
                                    last_access, bool(marginalized), valid_from, valid_until, pose_value)
        return out

    def get_unit(self, uid: int) -> MemoryUnit | None:
        """One unit, or None."""
        return self.get_units([uid]).get(uid)

    def existing_ids(self, ids: Iterable[int]) -> set[int]:
        """The subset of ``ids`` that exist."""
        id_list = _valid_ids(ids)
        found: set[int] = set()
        for start in range(0, len(id_list), 500):
            chunk = id_list[start:start + 500]
            found.update(r[0] for r in self.query(
                f'SELECT id FROM units WHERE id IN ({_qmarks(len(chunk))})', chunk))
        return found

    def vectors(self, ids: Iterable[int]) -> dict[int, npt.NDArray[np.float32]]:
        """Stored vectors by unit id."""
        id_list = _valid_ids(ids)
        out: dict[int, npt.NDArray[np.float32]] = {}
        for start in range(0, len(id_list), 500):
            chunk = id_list[start:start + 500]
            for uid, blob in self.query(
                    f'SELECT unit_id, vector FROM vectors WHERE unit_id IN ({_qmarks(len(chunk))})', chunk):
                out[uid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def iter_vectors(self, *, marginalized: bool, batch: int = 20000
                     ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        """All vectors of active (or of marginalized) units, in id order, in batches."""
        last = -1
        while True:
            rows = self.query(
                'SELECT v.unit_id, v.vector FROM vectors v JOIN units u ON u.id = v.unit_id '
                'WHERE u.marginalized = ? AND v.unit_id > ? ORDER BY v.unit_id LIMIT ?',
                (int(marginalized), last, batch))
            if not rows:
                return
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vecs = np.frombuffer(b''.join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            yield ids, vecs
            last = int(ids[-1])

    def count(self, where: str = '1', params: Sequence[Any] = ()) -> int:
        """Number of units matching a fixed SQL condition."""
        return int(self.query(f'SELECT COUNT(*) FROM units WHERE {where}', params)[0][0])

    def max_id(self) -> int:
        """Largest unit id (0 when empty)."""
        return int(self.query('SELECT COALESCE(MAX(id), 0) FROM units')[0][0])

    # -- candidate lookups (indexes only, never a scan of all units) -------------------

    def units_with_entities(self, keys: Sequence[str], *, per_key: int, active_only: bool = True,
                            unit_filter: UnitFilter | None = None) -> dict[str, list[int]]:
        """Most recent unit ids per entity key (among those ``unit_filter`` lets through)."""
        out: dict[str, list[int]] = {}
        if unit_filter is None:
            cond, params = ('u.marginalized = 0' if active_only else '1'), list[Any]()
        else:
            cond, params = _filter_sql(unit_filter)
        for key in dict.fromkeys(keys):
            rows = self.query(
                f'SELECT e.unit_id FROM unit_entities e JOIN units u ON u.id = e.unit_id '
                f'WHERE e.entity = ? AND {cond} ORDER BY e.unit_id DESC LIMIT ?', (key, *params, per_key))
            out[key] = [r[0] for r in rows]
        return out

    def entity_keys_of(self, ids: Sequence[int]) -> dict[int, set[str]]:
        """Entity keys per unit."""
        out: dict[int, set[str]] = {int(i): set() for i in ids}
        id_list = list(out)
        for start in range(0, len(id_list), 500):
            chunk = id_list[start:start + 500]
            for key, uid in self.query(
                    f'SELECT entity, unit_id FROM unit_entities WHERE unit_id IN ({_qmarks(len(chunk))})',
                    chunk):
                out[uid].add(key)
        return out

    def episode_before(self, episode_id: str, stamp: float, *, since: float,
                       limit: int) -> list[tuple[int, float]]:
        """(id, stamp) of the latest units of an episode at or before ``stamp``."""
        return [(r[0], r[1]) for r in self.query(
            'SELECT id, stamp FROM units WHERE episode_id = ? AND stamp <= ? AND stamp >= ? '
            'ORDER BY stamp DESC, id DESC LIMIT ?', (episode_id, stamp, since, limit))]

    def fts_scored(self, match: str, *, limit: int, unit_filter: UnitFilter) -> list[tuple[int, float]]:
        """(unit id, BM25 score > 0) of the best matches of an FTS5 MATCH expression, best first.

        Ranking every match grows with the store (seconds for common words at 1M units),
        so only the newest ``max(10 x limit, 1000)`` matches are ranked (ranking is most
        of this call's time: 2.2 ms for 1,000 matches, 5.1 ms for 2,500 at 100k units): rare
        words (names, numbers), which are what lexical recall is for, have few matches and
        are found at any age; common words are covered by the vector index anyway. A filter
        that narrows (episode, time, place, types) is applied inside the query, so the
        newest matches counted are matches *of the filter*.
        """
        if limit <= 0:
            return []
        scan = max(limit * 10, 1000)
        if unit_filter.narrows:
            cond, params = _filter_sql(unit_filter)
            rows = self.query(
                'SELECT f.rowid, bm25(units_fts) FROM units_fts f JOIN units u ON u.id = f.rowid '
                f'WHERE units_fts MATCH ? AND {cond} ORDER BY f.rowid DESC LIMIT ?',
                (match, *params, scan))
            rows.sort(key=lambda r: r[1])  # bm25: lower is better
            return [(int(r[0]), -float(r[1])) for r in rows[:limit]]
        rows = self.query('SELECT rowid, bm25(units_fts) FROM units_fts WHERE units_fts MATCH ? '
                          'ORDER BY rowid DESC LIMIT ?', (match, scan))
        rows.sort(key=lambda r: r[1])
        # Best first, only as far as ``limit`` visible ones: checking all 1,000 was a
        # quarter of this call (py-spy, 10k store), and hidden units are few.
        cond, params = _filter_sql(unit_filter)
        visible: list[tuple[int, float]] = []
        start, step = 0, 2 * limit
        while start < len(rows) and len(visible) < limit:
            chunk = rows[start:start + step]
            shown = {r[0] for r in self.query(
                f'SELECT id FROM units u WHERE id IN ({_qmarks(len(chunk))}) AND {cond}',
                (*(r[0] for r in chunk), *params))}
            visible += [(int(r[0]), -float(r[1])) for r in chunk if r[0] in shown]
            start, step = start + step, min(2 * step, 500)
        return visible[:limit]

    def term_document_counts(self, words: Sequence[str]) -> tuple[dict[str, int], int]:
        """(index term -> number of units containing it, number of units) for ``words``.

        The words go through the full-text index's own tokenizer (a temporary FTS5
        table), so the terms are exactly those BM25 scores; terms no unit has are absent.
        A store opened read-only cannot write even temporary tables: there each word is
        counted by a MATCH of its own, up to ``_COUNT_CAP`` units.
        """
        if not words:
            return {}, 0
        with self._lock:
            try:
                total = int(self._db.execute('SELECT max(id) FROM units').fetchone()[0] or 0)
                if self._term_tables is not False:
                    try:
                        return self._vocabulary_counts(words), total
                    except sqlite3.OperationalError:
                        if self._term_tables:
                            raise
                        self._term_tables = False  # read-only: never try again
                counts: dict[str, int] = {}
                for word in dict.fromkeys(words):
                    n = int(self._db.execute(
                        'SELECT count(*) FROM (SELECT rowid FROM units_fts WHERE units_fts MATCH ? LIMIT ?)',
                        ('"' + word.replace('"', '') + '"', _COUNT_CAP)).fetchone()[0])
                    if n:
                        counts[word] = n
                return counts, total
            except sqlite3.Error as exc:
                msg = f'memory store read failed: {exc}'
                raise StoreError(msg) from None

    def _vocabulary_counts(self, words: Sequence[str]) -> dict[str, int]:
        if self._term_tables is None:
            self._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words "
                             "USING fts5(w, tokenize='porter unicode61')")
            self._db.execute('CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words_v '
                             'USING fts5vocab(temp, query_words, row)')
            self._db.execute('CREATE VIRTUAL TABLE IF NOT EXISTS temp.units_fts_v '
                             'USING fts5vocab(main, units_fts, row)')
            self._term_tables = True
        self._db.execute('INSERT INTO temp.query_words(w) VALUES (?)', (' '.join(words),))
        try:
            terms = [r[0] for r in self._db.execute('SELECT term FROM temp.query_words_v')]
        finally:
            self._db.execute('DELETE FROM temp.query_words')
        if not terms:
            return {}
        return {str(t): int(n) for t, n in self._db.execute(
            f'SELECT term, doc FROM temp.units_fts_v WHERE term IN ({_qmarks(len(terms))})', terms)}

    def entity_document_counts(self, keys: Sequence[str], *, cap: int = 10000) -> dict[str, int]:
        """Number of units mentioning each entity key (counted up to ``cap``); unknown keys absent."""
        out: dict[str, int] = {}
        for key in dict.fromkeys(keys):
            n = int(self.query('SELECT count(*) FROM (SELECT 1 FROM unit_entities WHERE entity = ? LIMIT ?)',
                               (key, cap))[0][0])
            if n:
                out[key] = n
        return out

    def filtered_ids(self, unit_filter: UnitFilter, *, limit: int) -> list[int] | None:
        """Ids of the units a narrowing filter lets through, or None if more than ``limit``.

        A pose filter is applied here as its bounding box; callers check the distance.
        """
        cond, params = _filter_sql(unit_filter)
        rows = self.query(f'SELECT id FROM units u WHERE {cond} LIMIT ?', (*params, limit + 1))
        if len(rows) > limit:
            return None
        return [int(r[0]) for r in rows]

    # -- edges -----------------------------------------------------------------------

    def edge_scale(self) -> EdgeScale:
        """The factor association edges are read with (see :class:`EdgeScale`)."""
        return EdgeScale.parse(self.get_meta(_EDGE_SCALE_KEY))

    def set_edge_scale(self, scale: EdgeScale) -> None:
        """Record a new factor (inside the current transaction, if any)."""
        self.set_meta(_EDGE_SCALE_KEY, scale.dump())

    def add_edges(self, edges: Iterable[Edge]) -> None:
        """Insert edges; an existing (src, dst, kind) keeps the larger weight."""
        with self.atomic() as db:
            scale = self.edge_scale()
            db.executemany(
                'INSERT INTO edges(src, dst, kind, weight) VALUES (?, ?, ?, ?) '
                'ON CONFLICT(src, dst, kind) DO UPDATE SET weight = MAX(weight, excluded.weight)',
                [(e.src, e.dst, e.kind.value, float(e.weight) / scale.factor(e.src, e.kind.value))
                 for e in edges if e.src != e.dst])

    def strengthen_edge(self, src: int, dst: int, kind: EdgeKind, gain: float) -> None:
        """Hebbian update: weight += gain * (1 - weight), creating the edge if absent."""
        with self.atomic() as db:
            # On stored weights w = weight / f: w += gain * (1 / f - w).
            inverse = 1.0 / self.edge_scale().factor(src, kind.value)
            db.execute(
                'INSERT INTO edges(src, dst, kind, weight) VALUES (?, ?, ?, ?) '
                'ON CONFLICT(src, dst, kind) DO UPDATE SET weight = weight + ? * (? - weight)',
                (src, dst, kind.value, gain * inverse, gain, inverse))

    def edges_of(self, ids: Sequence[int], *, fanout: int, stored: bool = False) -> dict[int, list[Edge]]:
        """The strongest ``fanout`` edges touching each unit, both directions.

        Equal weights are ordered by (src, dst, kind), so the answer is one list, the
        same one :class:`~brainmem_ros.memory.adjacency.Adjacency` holds. Weights are
        effective (scaled, :class:`EdgeScale`); ``stored``: as stored, in the same order.
        """
        out: dict[int, list[Edge]] = {}
        with self._lock:
            params = self.edge_scale().params
            pick = 'weight' if stored else 'eff'
            for uid in dict.fromkeys(ids):
                rows = self.query(
                    f'SELECT src, dst, kind, {pick} FROM ('
                    f' SELECT src, dst, kind, weight, {_EFFECTIVE_SQL} AS eff FROM edges WHERE src = ?'
                    f' UNION ALL SELECT src, dst, kind, weight, {_EFFECTIVE_SQL} FROM edges WHERE dst = ?'
                    ') ORDER BY eff DESC, src, dst, kind LIMIT ?', (*params, uid, *params, uid, fanout))
                out[uid] = [Edge(s, d, EdgeKind(k), w) for s, d, k, w in rows]
        return out

    def association_edges(self, lo: int, hi: int) -> int:
        """Number of association (scaled) edges with ``lo <= src < hi``."""
        return int(self.query(f'SELECT COUNT(*) FROM edges WHERE src >= ? AND src < ? '
                              f'AND kind NOT IN {_STRUCTURAL_SQL}', (lo, hi))[0][0])

    def prune_edges(self, lo: int, hi: int, *, below: float, limit: int) -> int:
        """Delete the weakest association edges with ``lo <= src < hi`` and an effective
        weight under ``below``, at most ``limit`` of them; returns how many."""
        if limit <= 0:
            return 0
        with self.atomic() as db:
            params = self.edge_scale().params
            return int(db.execute(
                'DELETE FROM edges WHERE (src, dst, kind) IN (SELECT src, dst, kind FROM edges '
                f'WHERE src >= ? AND src < ? AND kind NOT IN {_STRUCTURAL_SQL} '
                f'AND {_EFFECTIVE_SQL} < ? ORDER BY {_EFFECTIVE_SQL}, src, dst, kind LIMIT ?)',
                (lo, hi, *params, below, *params, limit)).rowcount)

    def max_edge_src(self) -> int:
        """The largest source id of any edge (0 without edges)."""
        return int(self.query('SELECT COALESCE(MAX(src), 0) FROM edges')[0][0])

    def connected_units(self, lo: int, hi: int, *, low: float, high: float,
                        limit: int) -> list[tuple[int, int]]:
        """(edges, id) of the ``limit`` active, unprotected units with ``lo < id <= hi`` and a
        strength in [low, high] that touch most edges (more edges first, then smaller ids)."""
        return [(int(c), int(u)) for c, u in self.query(
            'SELECT (SELECT COUNT(*) FROM edges WHERE src = u.id)'
            ' + (SELECT COUNT(*) FROM edges WHERE dst = u.id AND src != u.id) AS c, u.id FROM units u '
            'WHERE u.id > ? AND u.id <= ? AND u.marginalized = 0 AND u.protected = 0 '
            'AND u.strength BETWEEN ? AND ? AND c > 0 ORDER BY c DESC, u.id LIMIT ?',
            (lo, hi, low, high, limit))]

    def renormalise_edges(self, hi: int) -> EdgeScale:
        """Fold the scale into the stored weights of edges with ``src < hi`` (next part).

        One part of a renormalisation: call with growing ``hi`` until the answer's
        ``below`` is 0. Rewritten weights keep their effective value bit for bit
        (w * f, the product every reader computed). Each part is one transaction, a
        wholesale change (:meth:`rewriting_edges`).
        """
        with self.atomic():
            scale = self.edge_scale()
            lo = scale.below
            top = self.max_edge_src()
            with self.rewriting_edges() as db:
                db.execute(f'UPDATE edges SET weight = weight * ? WHERE src >= ? AND src < ? '
                           f'AND kind NOT IN {_STRUCTURAL_SQL}', (scale.scale, lo, hi))
            scale = EdgeScale() if hi > top else EdgeScale(scale.scale, hi)
            self.set_edge_scale(scale)
            return scale

    # -- watching edges ----------------------------------------------------------------

    def watch_edges(self, listener: EdgeListener) -> bool:
        """Call ``listener`` with the ids of units whose edges changed, after each transaction.

        Every change made through this store counts, however it was made (triggers
        record it): inserts, weight updates, deletes and deletes cascading from units.
        ``listener`` runs under the store's lock once the transaction has committed or
        rolled back (a rollback reports nothing: it changed nothing), or when
        :meth:`settle_edges` is called; it must not raise. ``None`` means any unit's
        edges may have changed (:meth:`rewriting_edges`). False when changes cannot be
        watched (SQLite refused the temporary triggers): the listener is not added.
        """
        with self._lock:
            if self._depth:
                msg = 'edges cannot start being watched inside a transaction'
                raise StoreError(msg)
            # Nothing changes through a read-only connection: nothing to watch.
            if not self._watching and not self.read_only:
                try:
                    self._db.execute(f'CREATE TEMP TABLE IF NOT EXISTS {_TOUCHED}(unit_id INTEGER NOT NULL)')
                    self._create_edge_triggers()
                except sqlite3.Error as exc:
                    _log.warning('edge changes of %s cannot be watched: %s', self.path, exc)
                    return False
                self._watching, self._edges_rewritten = True, False
            self._edge_listeners.append(listener)
            return True

    def unwatch_edges(self, listener: EdgeListener) -> None:
        """Stop calling ``listener``; the triggers go with the last listener."""
        with self._lock:
            if listener not in self._edge_listeners:
                return
            self._edge_listeners.remove(listener)
            if self._edge_listeners or self._depth or not self._watching:
                return  # inside a transaction they stay; settle_edges keeps their table empty
            try:
                for name in _EDGE_TRIGGERS:
                    self._db.execute(f'DROP TRIGGER IF EXISTS temp.{name}')
                self._db.execute(f'DROP TABLE IF EXISTS {_TOUCHED}')
            except sqlite3.Error as exc:
                _log.warning('edge triggers of %s not dropped: %s', self.path, exc)
                return
            self._watching = False

    def settle_edges(self) -> None:
        """Tell edge listeners about changes not yet reported (no-op inside a transaction).

        :meth:`atomic` does this when a transaction ends; a listener calls it before
        it answers, for changes made outside any transaction (raw SQL in autocommit).
        """
        with self._lock:
            if self._depth or not self._watching:
                return
            everything, self._edges_rewritten = self._edges_rewritten, False
            ids: frozenset[int] = frozenset()
            try:
                ids = frozenset(int(r[0]) for r in self._db.execute(
                    f'SELECT DISTINCT unit_id FROM {_TOUCHED}'))
                if ids:
                    self._db.execute(f'DELETE FROM {_TOUCHED}')
            except sqlite3.Error as exc:
                # Which units changed is unknown: every unit's edges may have.
                _log.warning('edge changes of %s not read (%s): all edges count as changed',
                             self.path, exc)
                everything = True
            if everything or ids:
                for listener in list(self._edge_listeners):
                    listener(None if everything else ids)

    @contextmanager
    def rewriting_edges(self) -> Iterator[sqlite3.Connection]:
        """A transaction (or a part of one) whose statements change edges wholesale.

        A trigger per edge row costs about as much as the row's update itself (~1 us;
        consolidation's decay touches every association edge, 23M rows at 1M units),
        so inside this block the triggers are off, and if any row changed, listeners are
        told that every unit's edges may have changed. The triggers come back with the
        block: re-created at its end, or restored by the rollback of the transaction.
        """
        with self.atomic() as db:
            watching = self._watching
            if watching:
                for name in _EDGE_TRIGGERS:
                    db.execute(f'DROP TRIGGER IF EXISTS temp.{name}')
            before = db.total_changes
            try:
                yield db
            finally:
                if watching and db.total_changes != before:
                    self._edges_rewritten = True
                if watching:
                    self._create_edge_triggers()

    def _create_edge_triggers(self) -> None:
        for name, body in _EDGE_TRIGGERS.items():
            self._db.execute(f'CREATE TEMP TRIGGER IF NOT EXISTS {name} {body}')

    def edge_count(self) -> int:
        """Number of edges."""
        return int(self.query('SELECT COUNT(*) FROM edges')[0][0])

    def all_edges(self) -> Iterator[Edge]:
        """Every edge (export, pictures), with its effective weight."""
        params = self.edge_scale().params
        for s, d, k, w in self.query(f'SELECT src, dst, kind, {_EFFECTIVE_SQL} FROM edges', params):
            yield Edge(s, d, EdgeKind(k), w)

    # -- access statistics and dynamics ------------------------------------------------

    def touch(self, ids: Sequence[int], now: float) -> None:
        """Record a retrieval of ``ids``.

        Access statistics are a by-product of recall: on a full or read-only disk
        they are dropped (with a warning) so that Retrieve keeps answering. Inside
        a caller's transaction a failure propagates as usual.
        """
        with self._lock:
            outermost = self._depth == 0
            if outermost and self.read_only:
                return  # said once, when the store was opened read-only
            # No fsync of its own: the commit reaches the WAL (a kill -9 keeps it) and the
            # next synchronous commit or checkpoint makes it durable; only a power cut
            # before then loses it. Every Retrieve writes these, and a FULL commit per
            # Retrieve was its slowest, most variable step.
            relaxed = outermost and self.config.synchronous.upper() in ('FULL', 'EXTRA')
            if relaxed:
                self._db.execute('PRAGMA synchronous = NORMAL')
            try:
                with self.atomic() as db:
                    db.executemany('UPDATE units SET access_count = access_count + 1, '
                                   'last_access = ? WHERE id = ?', [(now, i) for i in ids])
            except StoreError as exc:
                if not outermost:
                    raise
                _log.warning('access statistics not recorded: %s', exc)
            finally:
                if relaxed:
                    self._db.execute(f'PRAGMA synchronous = {self.config.synchronous}')

    def set_fields(self, uid: int, **values: Any) -> None:
        """Update plain columns of one unit (names are fixed by callers, never user input)."""
        cols = ', '.join(f'{k} = ?' for k in values)
        with self.atomic() as db:
            db.execute(f'UPDATE units SET {cols} WHERE id = ?', (*values.values(), uid))

    def size_bytes(self) -> int:
        """Bytes on disk of the database and its WAL."""
        total = 0
        for suffix in ('', '-wal', '-shm'):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total


def _split_sql(script: str) -> list[str]:
    # executescript() would COMMIT our transaction; run statement by statement instead.
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
