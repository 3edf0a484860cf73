"""Watching edge changes: who is told which units' edges a transaction changed.

The in-memory graph of :mod:`brainmem_ros.memory.adjacency` is told after every
transaction, however the change was made.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from brainmem_ros.errors import StoreError
from brainmem_ros.memory.config import StoreConfig
from brainmem_ros.memory.store.connection import Connection
from brainmem_ros.memory.store.sql import STRUCTURAL_SQL

_log = logging.getLogger(__name__)

#: Told the ids of units whose edges changed (``None``: possibly every unit's). A
#: negative id ``-u`` says that unit ``u`` has (or had) a structural edge.
EdgeListener = Callable[[frozenset[int] | None], None]


# Edge changes are recorded by TEMP triggers: they belong to this connection only
# (nothing is written to the file) and see every change made through it -- the
# store's methods, tests' raw SQL, deletes cascading from units -- as part of
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
    'edges_touched_structural': f'AFTER INSERT ON main.edges WHEN new.kind IN {STRUCTURAL_SQL} '
                                'BEGIN INSERT INTO edges_touched VALUES (-new.src), (-new.dst); END',
}


class EdgeWatching(Connection):
    """Edge listeners, fed by TEMP triggers of this connection."""

    def __init__(self, path: Path, *, config: StoreConfig | None = None) -> None:
        self._edge_listeners: list[EdgeListener] = []
        self._watching = False  # the edge triggers are installed
        self._edges_rewritten = False
        super().__init__(path, config=config)

    def _transaction_ended(self) -> None:
        self.settle_edges()

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
