"""Checks on a memory's data directory before its store is opened.

**One process per directory.** Two processes (two nodes given the same ``data_dir``, a
script opening the robot's store while the node runs) each kept their own vector index
and caches over one SQLite file: each one's Retrieve missed what the other stored, and
whichever closed last wrote an index file missing the other's units, which the next open
took as current (those memories were then never found by vector search). An exclusive
``flock`` on ``brainmem.lock`` in the directory, held while the memory is open, refuses
the second open with the pid of the first; the kernel drops it when a process dies, so
a crash never leaves the directory locked. A directory the process cannot write holds a
read-only store, which cannot corrupt anything: it is not locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

from brainmem_ros.errors import StoreError, StoreInUseError

LOCK_NAME = 'brainmem.lock'


class DirectoryLock:
    """The exclusive lock of a data directory (held until :meth:`release`)."""

    def __init__(self, fd: int | None) -> None:
        self._fd = fd

    @classmethod
    def acquire(cls, directory: Path) -> DirectoryLock:
        """Lock ``directory`` for this memory; StoreError naming the holder when another has it."""
        try:
            fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return cls(None)  # not writable: the store opens read-only
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 32, 0).decode(errors='replace').strip()
            os.close(fd)
            msg = (f'memory store {directory} is already open (process {holder or "unknown"}): one '
                   'process at a time per data directory, or each misses the memories of the '
                   'other; stop the other or give this one another data_dir')
            raise StoreInUseError(msg) from None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f'{os.getpid()}\n'.encode(), 0)
        return cls(fd)

    def release(self) -> None:
        """Unlock (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def refuse_truncated_store(db_path: Path, index_path: Path) -> None:
    """StoreError when the database file is empty but the index file says it held memories."""
    # An empty database file would open as a brand-new store and the saved index
    # be overwritten: if the index says there were memories, that is damage, not a
    # fresh start, and the operator must decide.
    sidecar = index_path.with_suffix(index_path.suffix + '.json')
    if not db_path.exists() or db_path.stat().st_size > 0 or not sidecar.exists():
        return
    try:
        count = int(json.loads(sidecar.read_text()).get('count', 0))
    except (ValueError, TypeError, AttributeError):
        return  # an unreadable sidecar says nothing about past memories
    if count > 0:
        msg = (f'{db_path} is empty but {index_path.name} holds {count} vectors: the database was '
               'truncated or replaced; restore it from a backup or move this directory away')
        raise StoreError(msg)
