"""Saving the hot index when the store is idle, without holding the memory's lock while
the file is written.

The index is derived from SQLite and saved so that the next start loads it instead of
rebuilding it. Units stored after a save do not make the file stale: the next open adds
them from SQLite (see :mod:`brainmem_ros.memory.index.files`). Other changes (a removal,
a restore) do, and after ``store.index_save_every`` changes of either kind a save is due.

A save has two parts. A copy of the FAISS index is taken under the memory's lock
(:func:`~brainmem_ros.memory.index.snapshot_index`, with the store generation and last
unit id it reflects), during which every Store and Retrieve waits: 0.24 s and 375 MB at
1M units, 26 ms at 100k. (Serializing under the lock instead took 1.2-2.7 s at 1M, and a
Store of 4.2 s on the 1M bench store.) Serializing, hashing and writing happen after the
lock is released. So that even the copy does not land on a request, a due save first
waits on this saver's thread until no request has come for :attr:`IndexSaver.idle_s`;
under a steady stream of requests (a perception topic never pauses for half a second)
it goes ahead after :attr:`IndexSaver.max_wait_s`, since a file left stale costs a full
rebuild at the next start (37 s at 1M) after a crash. A save asked for directly (at
close, after a rebuild on open) is written at once. A crash before a save has finished
leaves the previous file and sidecar, which the open checks as above.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from brainmem_ros.memory.index import IndexSnapshot, write_snapshot
from brainmem_ros.memory.threads import end_thread

# write_snapshot: the one call that writes (tests)
__all__ = ['IDLE_S', 'MAX_WAIT_S', 'IndexSaver', 'write_snapshot']
_log = logging.getLogger(__name__)
# How long the store must have had no request before a due save takes its copy of the
# index: longer than the gaps of a request stream (a planner's calls, a topic's batches).
IDLE_S = 0.5
# How long a due save waits for such a gap before it copies the index anyway.
MAX_WAIT_S = 120.0


class IndexSaver:
    """Writes snapshots of the index to ``path``: on :meth:`request`, once the store is idle; or now.

    ``idle`` says how long the store has gone without a request (0.0 while one is under way).
    """

    def __init__(self, path: Path, snapshot: Callable[[], IndexSnapshot | None],
                 *, idle: Callable[[], float]) -> None:
        self._path = path
        self._snapshot = snapshot  # takes the memory's lock for the copy; None: nothing to save
        self._idle = idle
        #: Seconds without a request a background save waits for (read at each check).
        self.idle_s = IDLE_S
        #: Seconds a due save waits for such a gap before it goes ahead (read at each check).
        self.max_wait_s = MAX_WAIT_S
        self._write_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._written = 0  # seq of the newest snapshot written
        self.saves = 0  # files written, in the background or not

    @property
    def written(self) -> int:
        """The seq of the newest snapshot written (0: none yet)."""
        return self._written

    def request(self) -> None:
        """Save once the store is idle, on the saver's thread (the caller may hold the memory's lock)."""
        with self._start_lock:
            if self._stop.is_set():
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name='brainmem-index-save', daemon=True)
                self._thread.start()
        self._wake.set()

    def write(self, snap: IndexSnapshot | None) -> bool:
        """Write ``snap`` now (unless a newer one is written); False when there was none or the disk
        refused it."""
        if snap is None:
            return False
        with self._write_lock:
            if snap.seq and snap.seq <= self._written:
                return True  # a background save took its copy before this one and lost the race
            try:
                write_snapshot(self._path, snap)
            except OSError as exc:
                # The index is derived from SQLite: when it cannot be written (read-only
                # or full disk) it stays in memory and the next open rebuilds it.
                _log.warning('vector index not saved (%s); it will be rebuilt on next open', exc)
                return False
            self._written = max(self._written, snap.seq)
            self.saves += 1
            return True

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._stop.is_set():
                return
            self._wake.clear()
            if not self._wait_idle():
                return  # closing: close() saves
            # The copy first (under the memory's lock), then the file (under the saver's):
            # never one lock while waiting for the other.
            try:
                self.write(self._snapshot())
            except Exception:  # noqa: BLE001 - a failed save must not end later ones
                # write() handles a disk that refuses the file; anything else (no memory
                # for the copy) ended the thread, and no save ran until close.
                _log.exception('vector index not saved; the next change tries again')

    def _wait_idle(self) -> bool:
        """Wait until the store has been idle for ``idle_s``, or for ``max_wait_s`` in all;
        False when closing first.

        Each wait is on the stop event and no longer than ``idle_s``, so close() never
        waits for one.
        """
        deadline = time.monotonic() + self.max_wait_s
        while not self._stop.is_set():
            left = min(self.idle_s - self._idle(), deadline - time.monotonic())
            if left <= 0:
                return True
            self._stop.wait(left)
        return False

    def close(self) -> None:
        """Stop the thread (after the save under way); later saves are written by :meth:`write`."""
        with self._start_lock:
            self._stop.set()
            thread = self._thread
        end_thread(thread, self._wake)
