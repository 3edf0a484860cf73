"""WAL checkpoints run on the store's checkpoint thread, not inside commits (store/checkpoint.py)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import numpy as np
from rosutil import wait_for

from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import MemoryUnit


def _rows_in_the_database_file(path: Path) -> int:
    # immutable=1 reads the main file alone: what a checkpoint has copied back from the log.
    db = sqlite3.connect(f'file:{path}?mode=ro&immutable=1', uri=True)
    try:
        return int(db.execute('SELECT count(*) FROM units').fetchone()[0])
    except sqlite3.OperationalError:
        return -1  # not even the schema is back in the file yet
    finally:
        db.close()


def test_commits_leave_checkpoints_to_the_thread(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'm.db')
    try:
        with store.reading() as db:
            assert db.execute('PRAGMA wal_autocheckpoint').fetchone()[0] == 0  # never inside a commit
        vec = np.zeros(4, dtype=np.float32)
        for i in range(40):
            store.insert_unit(MemoryUnit(id=0, stamp=1.0 + i, text=f'Unit {i} is on the shelf',
                                         last_access=1.0, valid_from=1.0), vec)
        # The thread copies the log back (at most once a second while commits go on). It
        # counts a checkpoint once SQLite returns, a moment after the rows reach the file.
        assert wait_for(lambda: _rows_in_the_database_file(store.path) == 40 and store.checkpoints >= 1,
                        timeout=30.0)
    finally:
        store.close()
    assert not Path(f'{store.path}-wal').exists() or Path(f'{store.path}-wal').stat().st_size == 0


def test_the_thread_ends_when_a_close_lands_just_before_it_clears_its_wake(tmp_path: Path) -> None:
    # close() sets the stop, then the wake. Landing after the thread's period and before
    # its clear, the wake was lost: the thread waited for another one and close() hung
    # in join. Here the wake's clear does what close() does first, at that moment.
    store = SqliteStore(tmp_path / 'm.db')
    try:
        class CloseLandsHere(threading.Event):
            def clear(self) -> None:
                store._ckpt_stop.set()
                self.set()
                super().clear()

        store._ckpt_wake = CloseLandsHere()
        store.insert_unit(MemoryUnit(id=0, stamp=1.0, text='The cup is on the shelf', last_access=1.0,
                                     valid_from=1.0), np.zeros(4, dtype=np.float32))
        thread = store._ckpt_thread
        assert thread is not None
        thread.join(10.0)
        assert not thread.is_alive(), 'the checkpoint thread lost the wake of a close'
    finally:
        store.close()
