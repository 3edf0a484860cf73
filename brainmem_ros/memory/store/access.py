"""Access statistics: what each Retrieve returned, written behind it.

Every Retrieve counts an access of each memory it returns (``access_count``,
``last_access``), which consolidation folds into strength and the ranking reads as
recency. Writing them inside the Retrieve made it a write request: a transaction of
its own, sometimes the commit that runs SQLite's WAL checkpoint (15.7 ms of a 29 ms
Retrieve, measured on the 10k bench store), and a wait for the write lock whenever
an ingest batch or a consolidation step held it.

So a Retrieve only notes the ids; a thread of the store writes the notes in one
background transaction shortly after (:data:`FLUSH_AFTER_S`, then a quiet spell of
the store), and the store writes what is left when it closes. Until then every read
of units and ranking columns through the store shows the noted values on top of the
rows, so answers do not depend on when the write happens; consolidation writes the
notes before it folds accesses into strength. A kill -9 in that window loses those
counts, as it could lose the non-durable write that held them before.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from brainmem_ros.errors import StoreError
from brainmem_ros.memory.config import StoreConfig
from brainmem_ros.memory.store.codec import UnitHead
from brainmem_ros.memory.store.units import UnitRows
from brainmem_ros.memory.threads import end_thread
from brainmem_ros.memory.types import MemoryUnit

_log = logging.getLogger(__name__)
#: How long the notes of one Retrieve wait for those of the next ones to join their write.
FLUSH_AFTER_S = 0.5
# The longest the writer then waits for a quiet spell before it claims the next gap
# between two requests (background_turn).
_QUIET_LIMIT_S = 0.05


class AccessStats(UnitRows):
    """``touch`` notes accesses; a writer thread (started by the first) records them.

    Reads by id (:meth:`get_units`, :meth:`unit_heads`) show the noted accesses.
    """

    def __init__(self, path: Path, *, config: StoreConfig | None = None) -> None:
        self._pending: dict[int, tuple[int, float]] = {}  # id -> (accesses, latest)
        self._pending_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop_access = threading.Event()
        self._writer: threading.Thread | None = None
        self.flush_after_s = FLUSH_AFTER_S
        super().__init__(path, config=config)

    def touch(self, ids: Sequence[int], now: float) -> None:
        """Note a retrieval of ``ids`` at ``now``; written shortly after (see the module)."""
        if self.read_only or self._stop_access.is_set():
            return  # said once, when the store was opened read-only
        with self._pending_lock:
            for uid in ids:
                count, latest = self._pending.get(uid, (0, now))
                self._pending[uid] = (count + 1, max(latest, now))
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_behind, name='brainmem-access',
                                                daemon=True)
                self._writer.start()
        self._wake.set()

    def get_units(self, ids: Iterable[int]) -> dict[int, MemoryUnit]:
        """Units by id (missing ids are absent), with the accesses noted and not yet written."""
        # Rows and notes under the store's lock, as the writer swaps and writes them.
        with self._lock:
            units = super().get_units(ids)
            with self._pending_lock:
                noted = [(uid, self._pending[uid]) for uid in units if uid in self._pending] \
                    if self._pending else []
        for uid, (count, latest) in noted:
            unit = units[uid]
            units[uid] = dataclasses.replace(unit, access_count=unit.access_count + count,
                                             last_access=max(unit.last_access, latest))
        return units

    def unit_heads(self, ids: Iterable[int], *, with_pose: bool = True) -> dict[int, UnitHead]:
        """Ranking columns by id (missing ids are absent), last_access as noted if later."""
        with self._lock:
            heads = super().unit_heads(ids, with_pose=with_pose)
            with self._pending_lock:
                noted = [(uid, self._pending[uid][1]) for uid in heads if uid in self._pending] \
                    if self._pending else []
        for uid, latest in noted:
            head = heads[uid]
            if latest > head.last_access:
                heads[uid] = head._replace(last_access=latest)
        return heads

    def pending_accesses(self) -> int:
        """Memories whose noted accesses are not written yet."""
        with self._pending_lock:
            return len(self._pending)

    def flush_access(self) -> int:
        """Write the noted accesses now; returns how many memories they were for.

        Access statistics are a by-product of recall: on a full or read-only disk they
        are dropped with a warning, as before, so that nothing else fails for them.
        """
        if not self._pending:
            return 0
        rows: list[tuple[int, float, int]] = []
        try:
            with self.atomic(durable=False, background=True) as db:
                # Taken inside the transaction, under the store's lock: a read through the
                # store sees the notes or the rows written from them, never neither.
                with self._pending_lock:
                    pending, self._pending = self._pending, {}
                # MAX: a reinforcement may have set a later last_access in the meantime.
                rows = [(count, latest, uid) for uid, (count, latest) in pending.items()]
                db.executemany('UPDATE units SET access_count = access_count + ?, '
                               'last_access = MAX(last_access, ?) WHERE id = ?', rows)
        except StoreError as exc:
            _log.warning('access statistics of %d memories not recorded: %s', len(rows), exc)
        return len(rows)

    def _write_behind(self) -> None:
        # The stop is looked at before each wait: close() sets it and then the wake,
        # and a close during a write has its wake cleared below, so a wait on the wake
        # alone would never end (a close that hung in join, met at the end of a loop
        # of Retrieves).
        while not self._stop_access.is_set():
            self._wake.wait()
            if self._stop_access.wait(self.flush_after_s):
                return  # close() writes what is left
            # Between requests, not into them (store.gate).
            with self.background_turn(_QUIET_LIMIT_S):
                # Cleared before the notes are taken: a touch after the take wakes it again.
                self._wake.clear()
                self.flush_access()

    def close(self) -> None:
        """Stop the writer, write the notes left, then close the store."""
        end_thread(self._writer, self._stop_access, self._wake)
        if not self.read_only:
            self.flush_access()
        super().close()
