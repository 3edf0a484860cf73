"""Saving the hot index without holding the memory's lock while the file is written.

The index is derived from SQLite and saved every ``store.index_save_every`` changes, so
that the next start loads it instead of rebuilding it. A save had rewritten the whole
file, with its checksum and two fsyncs, under the memory's lock: the Store or the
consolidation cycle that crossed the threshold held every request up for it (a Store
of 336 ms on the 10k bench store while cycles ran, ``bench.perf --parts consolidate``).

Now only the copy of the index in memory is taken under the lock, with the store
generation it reflects (:func:`~brainmem_ros.memory.index.snapshot_index`); hashing and
writing happen on a thread of this saver, after a quiet spell of the store. A save
asked for directly (at close, after a rebuild) writes at once. A crash before a save
has finished leaves the previous file and sidecar, which the generation check on open
rejects: the index is rebuilt from SQLite, as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from brainmem_ros.memory.index import IndexSnapshot, write_snapshot
from brainmem_ros.memory.threads import end_thread

__all__ = ['IndexSaver', 'write_snapshot']  # write_snapshot: the one call that writes (tests)
_log = logging.getLogger(__name__)
# The longest a background save waits for a pause in the store's use (wait_quiet).
_QUIET_LIMIT_S = 0.2


class IndexSaver:
    """Writes snapshots of the index to ``path``: in the background on :meth:`request`, or now."""

    def __init__(self, path: Path, snapshot: Callable[[], IndexSnapshot],
                 *, quiet: Callable[[float], None]) -> None:
        self._path = path
        self._snapshot = snapshot  # takes the memory's lock for the copy
        self._quiet = quiet
        self._write_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._written = 0  # seq of the newest snapshot written
        self.saves = 0  # files written, in the background or not

    def request(self) -> None:
        """Save soon, on the saver's thread (the caller may hold the memory's lock)."""
        with self._start_lock:
            if self._stop.is_set():
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name='brainmem-index-save', daemon=True)
                self._thread.start()
        self._wake.set()

    def write(self, snap: IndexSnapshot) -> bool:
        """Write ``snap`` now (unless a newer one is written); False when the disk refused it."""
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
            self._quiet(_QUIET_LIMIT_S)
            # The copy first (under the memory's lock), then the file (under the saver's):
            # never one lock while waiting for the other.
            self.write(self._snapshot())

    def close(self) -> None:
        """Stop the thread (after the save under way); later saves are written by :meth:`write`."""
        with self._start_lock:
            self._stop.set()
            thread = self._thread
        end_thread(thread, self._wake)
