"""The fleet outbox's SQL, in the robot's own SQLite (``memory.db``).

Named operations over a :class:`SqliteStore` (its connection, its lock: its
transactions for writes, :meth:`~SqliteStore.reading` for reads), like the fact layer.
Tables, versioned apart from the memory schema (meta key ``fleet_schema_version``):

- ``fleet_shared``: the units this robot shares, and why;
- ``fleet_outbox``: one row per shared unit whose current state the server has not
  acknowledged yet, with the version to send; a newer change replaces the version,
  so the outbox holds at most one row per unit (bounded by ``outbox_max``);
- ``fleet_outbox_reinforce``: rewards for other robots' units, keyed by a local
  sequence number the server deduplicates on;
- ``fleet_withheld``: units taken back explicitly, which the policy never shares again
  (an explicit share does).

A row leaves the outbox only after the server committed it, and only if its version
did not change meanwhile: a crash at any point resends, and the server's upsert keyed
by (robot id, unit id, version) makes the resend harmless.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import NamedTuple

from brainmem_ros.errors import SchemaVersionError
from brainmem_ros.fleet.pg_store import Reinforcement
from brainmem_ros.memory.store import SqliteStore

VERSION_KEY = 'fleet_schema_version'
OUTBOX_VERSION = 2
_SEQ_KEY = 'fleet_version_seq'
_MARK_KEY = 'fleet_policy_mark'
_CURSOR_KEY = 'fleet_reinforce_cursor'

_SCHEMA_V1 = (
    'CREATE TABLE IF NOT EXISTS fleet_shared (unit_id INTEGER PRIMARY KEY, reason TEXT NOT NULL, '
    'since REAL NOT NULL)',
    'CREATE TABLE IF NOT EXISTS fleet_outbox (unit_id INTEGER PRIMARY KEY, version INTEGER NOT NULL, '
    "op TEXT NOT NULL CHECK (op IN ('upsert', 'unshare')), enqueued REAL NOT NULL, "
    'attempts INTEGER NOT NULL DEFAULT 0)',
    'CREATE TABLE IF NOT EXISTS fleet_outbox_reinforce (seq INTEGER PRIMARY KEY, robot_id TEXT NOT NULL, '
    'unit_id INTEGER NOT NULL, reward REAL NOT NULL, note TEXT NOT NULL, stamp REAL NOT NULL)',
)
# Version 2: units taken back explicitly (FleetSync.unshare).
_SCHEMA_V2 = (
    'CREATE TABLE IF NOT EXISTS fleet_withheld (unit_id INTEGER PRIMARY KEY, since REAL NOT NULL)',
)
_MIGRATIONS: tuple[tuple[str, ...], ...] = (_SCHEMA_V1, _SCHEMA_V2)
assert len(_MIGRATIONS) == OUTBOX_VERSION


class Pending(NamedTuple):
    """A unit waiting to be sent: its id, the version to send, upsert or unshare."""

    unit_id: int
    version: int
    op: str


class OutboxCounts(NamedTuple):
    """Sizes of the outbox."""

    shared: int
    pending: int
    pending_reinforcements: int


class OutboxStore:
    """The outbox tables of one robot's memory."""

    def __init__(self, store: SqliteStore, *, max_pending: int) -> None:
        self.store = store
        self.max_pending = max_pending
        self._migrate()

    def _migrate(self) -> None:
        version = int(self.store.get_meta(VERSION_KEY, '0'))
        if version > OUTBOX_VERSION:
            msg = (f'{self.store.path} has fleet outbox version {version}, newer than this brainmem '
                   f'({OUTBOX_VERSION})')
            raise SchemaVersionError(msg)
        if version == OUTBOX_VERSION or self.store.read_only:
            return
        with self.store.atomic() as db:
            for step in range(version, OUTBOX_VERSION):
                for statement in _MIGRATIONS[step]:
                    db.execute(statement)
            self.store.set_meta(VERSION_KEY, str(OUTBOX_VERSION))

    # -- sharing ---------------------------------------------------------------------

    def _next_version(self) -> int:
        seq = int(self.store.get_meta(_SEQ_KEY, '0')) + 1
        self.store.set_meta(_SEQ_KEY, str(seq))
        return seq

    def share(self, reasons: Sequence[tuple[int, str]], *, now: float, mark: int | None = None,
              explicit: bool = False) -> int:
        """Share units (id, reason) and queue them; returns how many the bound refused.

        Units already shared keep their reason and are queued again. ``mark``, when
        given, records in the same transaction that the policy has seen every unit
        up to that id. Units taken back (:meth:`unshare` with ``withhold``) are left
        out unless ``explicit``, which ends their withholding.
        """
        refused = 0
        with self.store.atomic() as db:
            pending = db.execute('SELECT COUNT(*) FROM fleet_outbox').fetchone()[0]
            for uid, reason in reasons:
                if explicit:
                    db.execute('DELETE FROM fleet_withheld WHERE unit_id = ?', (uid,))
                elif db.execute('SELECT 1 FROM fleet_withheld WHERE unit_id = ?', (uid,)).fetchone():
                    continue
                queued = db.execute('SELECT 1 FROM fleet_outbox WHERE unit_id = ?', (uid,)).fetchone()
                if queued is None and pending >= self.max_pending:
                    refused += 1
                    continue
                db.execute('INSERT INTO fleet_shared (unit_id, reason, since) VALUES (?, ?, ?) '
                           'ON CONFLICT(unit_id) DO NOTHING', (uid, reason, now))
                self._queue(db, uid, 'upsert', now)
                pending += queued is None
            if mark is not None:
                self.store.set_meta(_MARK_KEY, str(mark))
        return refused

    def changed(self, unit_ids: Sequence[int], *, now: float) -> int:
        """Queue again the shared ones among ``unit_ids`` (their state changed); returns how many."""
        shared = self.shared_among(unit_ids)
        if not shared:
            return 0
        with self.store.atomic() as db:
            for uid in sorted(shared):
                self._queue(db, uid, 'upsert', now)
        return len(shared)

    def unshare(self, unit_ids: Sequence[int], *, now: float, withhold: bool = False) -> int:
        """Stop sharing units (deleted, or taken back): the server removes their rows.

        ``withhold``: the units were taken back on purpose, and the policy must not share
        them again when they change. Returns how many shared units were taken back.
        """
        shared = self.shared_among(unit_ids)
        if withhold:
            with self.store.atomic() as db:
                db.executemany('INSERT OR IGNORE INTO fleet_withheld (unit_id, since) VALUES (?, ?)',
                               [(int(uid), now) for uid in unit_ids])
        if not shared:
            return 0
        with self.store.atomic() as db:
            for uid in sorted(shared):
                db.execute('DELETE FROM fleet_shared WHERE unit_id = ?', (uid,))
                self._queue(db, uid, 'unshare', now)
        return len(shared)

    def _queue(self, db: sqlite3.Connection, uid: int, op: str, now: float) -> None:
        version = self._next_version()
        db.execute(
            'INSERT INTO fleet_outbox (unit_id, version, op, enqueued) VALUES (?, ?, ?, ?) '
            'ON CONFLICT(unit_id) DO UPDATE SET version = excluded.version, op = excluded.op',
            (uid, version, op, now))

    def shared_among(self, unit_ids: Sequence[int]) -> set[int]:
        """Which of ``unit_ids`` are shared."""
        ids = sorted({int(i) for i in unit_ids})
        out: set[int] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            with self.store.reading() as db:
                rows = db.execute(
                    f'SELECT unit_id FROM fleet_shared WHERE unit_id IN ({",".join("?" * len(chunk))})',
                    chunk).fetchall()
            out.update(int(r[0]) for r in rows)
        return out

    def policy_mark(self) -> int:
        """The highest unit id the sharing policy has looked at."""
        return int(self.store.get_meta(_MARK_KEY, '0'))

    def set_policy_mark(self, mark: int) -> None:
        """Record that the policy has looked at every unit up to ``mark``."""
        self.store.set_meta(_MARK_KEY, str(mark))

    def unit_ids_after(self, mark: int, *, limit: int) -> list[int]:
        """Unit ids above ``mark``, ascending (what the policy has not seen yet)."""
        with self.store.reading() as db:
            rows = db.execute('SELECT id FROM units WHERE id > ? ORDER BY id LIMIT ?',
                              (mark, limit)).fetchall()
        return [int(r[0]) for r in rows]

    # -- draining --------------------------------------------------------------------

    def pending(self, *, limit: int) -> list[Pending]:
        """The oldest queued units."""
        with self.store.reading() as db:
            rows = db.execute('SELECT unit_id, version, op FROM fleet_outbox ORDER BY version LIMIT ?',
                              (limit,)).fetchall()
        return [Pending(int(u), int(v), str(o)) for u, v, o in rows]

    def sent(self, items: Sequence[Pending]) -> None:
        """The server committed these versions: drop them unless a newer one was queued."""
        if not items:
            return
        with self.store.atomic() as db:
            db.executemany('DELETE FROM fleet_outbox WHERE unit_id = ? AND version = ?',
                           [(p.unit_id, p.version) for p in items])

    def attempted(self, items: Sequence[Pending]) -> None:
        """Count a failed attempt for these rows."""
        if not items:
            return
        with self.store.atomic() as db:
            db.executemany('UPDATE fleet_outbox SET attempts = attempts + 1 WHERE unit_id = ?',
                           [(p.unit_id,) for p in items])

    # -- reinforcements --------------------------------------------------------------

    def queue_reinforcement(self, item: Reinforcement) -> int:
        """Queue a reward for another robot's unit; returns its local sequence number."""
        with self.store.atomic() as db:
            cur = db.execute('INSERT INTO fleet_outbox_reinforce (robot_id, unit_id, reward, note, stamp) '
                             'VALUES (?, ?, ?, ?, ?)',
                             (item.robot_id, item.unit_id, item.reward, item.note, item.stamp))
            return int(cur.lastrowid or 0)

    def pending_reinforcements(self, *, limit: int) -> list[tuple[int, Reinforcement]]:
        """Queued rewards, oldest first, with their sequence numbers."""
        with self.store.reading() as db:
            rows = db.execute(
                'SELECT seq, robot_id, unit_id, reward, note, stamp FROM fleet_outbox_reinforce '
                'ORDER BY seq LIMIT ?', (limit,)).fetchall()
        return [(int(seq), Reinforcement(0, r, int(u), '', float(w), n, float(s)))
                for seq, r, u, w, n, s in rows]

    def reinforcements_sent(self, seqs: Sequence[int]) -> None:
        """The server has these rewards."""
        with self.store.atomic() as db:
            db.executemany('DELETE FROM fleet_outbox_reinforce WHERE seq = ?', [(s,) for s in seqs])

    def reinforce_cursor(self) -> int:
        """The last server reinforcement id applied to this robot's memory."""
        return int(self.store.get_meta(_CURSOR_KEY, '0'))

    def set_reinforce_cursor(self, cursor: int) -> None:
        """Record (inside the caller's transaction) the last applied server reinforcement."""
        self.store.set_meta(_CURSOR_KEY, str(cursor))

    # -- inspection ------------------------------------------------------------------

    def counts(self) -> OutboxCounts:
        """How many units are shared and waiting, and how many rewards wait."""
        with self.store.reading() as db:
            shared, pending, rewards = db.execute(
                'SELECT (SELECT COUNT(*) FROM fleet_shared), (SELECT COUNT(*) FROM fleet_outbox), '
                '(SELECT COUNT(*) FROM fleet_outbox_reinforce)').fetchone()
        return OutboxCounts(int(shared), int(pending), int(rewards))
