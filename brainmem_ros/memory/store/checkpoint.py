"""WAL checkpoints on a connection and thread of their own, never inside a commit.

SQLite copies the write-ahead log back into the database file once it holds 1,000
pages, inside the commit that crossed the mark, and fsyncs the file. That commit ran
under the memory's lock: on the 100k bench store one consolidation chunk in 28 took
13-19 ms instead of about 1, the first 160 ms, and every Retrieve and Store waited
for it. Here the store's connection does not checkpoint (``wal_autocheckpoint = 0``);
after each transaction a thread is told, and at most once every :data:`PERIOD_S` it
runs a PASSIVE checkpoint on its own connection, which takes none of the memory's
locks and lets readers and the writer go on (SQLite's WAL allows one checkpointer
beside them). A checkpoint with nothing new to copy does no I/O. Close still
truncates the log on the store's connection.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from brainmem_ros.memory.config import StoreConfig
from brainmem_ros.memory.store.connection import Connection
from brainmem_ros.memory.threads import end_thread

_log = logging.getLogger(__name__)
#: SQLite's own default for wal_autocheckpoint (pages), restored if the thread cannot start.
PAGES = 1000
#: The shortest time between two checkpoints while commits go on.
PERIOD_S = 1.0


class WalCheckpoints(Connection):
    """A writable store's checkpoints, run by a thread with its own connection."""

    def __init__(self, path: Path, *, config: StoreConfig | None = None) -> None:
        self._ckpt_wake = threading.Event()
        self._ckpt_stop = threading.Event()
        self._ckpt_thread: threading.Thread | None = None
        #: Checkpoints the thread has run (tests, Stats).
        self.checkpoints = 0
        super().__init__(path, config=config)
        if self.read_only:
            return
        with self._lock:
            self._db.execute('PRAGMA wal_autocheckpoint = 0')
        self._ckpt_thread = threading.Thread(target=self._run_checkpoints, name='brainmem-checkpoint',
                                             daemon=True)
        self._ckpt_thread.start()

    def _transaction_ended(self) -> None:
        super()._transaction_ended()
        self._ckpt_wake.set()

    def _run_checkpoints(self) -> None:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute(f'PRAGMA busy_timeout = {int(self.config.busy_timeout_ms)}')
        except sqlite3.Error as exc:
            _log.warning('WAL checkpoints of %s run inside commits again: %s', self.path, exc)
            with self._lock:
                self._db.execute(f'PRAGMA wal_autocheckpoint = {PAGES}')
            return
        try:
            # The stop before each wait, as the access writer's: a close between the
            # period's end and the clear below would otherwise lose its wake.
            while not self._ckpt_stop.is_set():
                self._ckpt_wake.wait()
                # At most one checkpoint a period: the log gathers the commits in between,
                # and the database file gets one fsync for all of them.
                if self._ckpt_stop.wait(PERIOD_S):
                    return
                self._ckpt_wake.clear()
                try:
                    db.execute('PRAGMA wal_checkpoint(PASSIVE)').fetchone()
                except sqlite3.Error as exc:
                    _log.warning('WAL checkpoint of %s failed (tried again after the next commit): %s',
                                 self.path, exc)
                    continue
                self.checkpoints += 1
        finally:
            db.close()

    def close(self) -> None:
        """Stop the checkpoint thread, then close (the close truncates the log)."""
        end_thread(self._ckpt_thread, self._ckpt_stop, self._ckpt_wake)
        super().close()
