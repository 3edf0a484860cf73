"""Unit vectors held in process memory, by id: what Retrieve reads hundreds of per query.

A Retrieve compares the query with every candidate and every unit activation reaches
(about 400 at the defaults), and reading their vectors from SQLite was its slowest
read: 1.6 ms a query at 10k units with a warm page cache, and 44 ms at 100k when the
kernel had dropped the file's pages (a store of 100k units is 400 MB, most of it
vectors; SQLite's own page cache holds 64 MB). Here they are float16 rows in blocks
indexed by id, 768 bytes a unit at 384 dimensions: anonymous memory, which the page
cache's reclaim does not touch.

Vectors never change once stored, so the cache needs no invalidation beyond deletion.
Every vector it hands out, from memory or read through from SQLite, is rounded to
float16 the same way, so a Retrieve answers the same whether the cache is filled yet
or not (cosines move by less than 1e-3 from the stored float32).

Each id's slot is *unknown* (not read yet), *held*, or *absent* (deleted). A filler
(:meth:`offer`: the bulk read after opening, or a read-through) only writes unknown
slots; an insert (:meth:`put`) always writes; a delete (:meth:`discard`) marks the
slot absent. So a bulk read that saw a unit before it was deleted and its id reused
can never put the old vector back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

_BLOCK = 1 << 16  # ids per block: growing never copies what is held
_UNKNOWN, _HELD, _ABSENT = 0, 1, 2
_FLOAT16_MAX = 65000.0
# float16 -> float32 through a table of all 65,536 values: numpy's own conversion of
# 400 vectors took 0.26 ms, the table 0.14 ms (the same values).
_WIDEN = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)


def as_stored(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``vectors`` as the cache holds them (float16), back in float32."""
    with np.errstate(over='ignore'):
        stored: npt.NDArray[np.float32] = np.asarray(vectors, dtype=np.float16).astype(np.float32)
    # A component beyond float16's range (an encoder that does not normalise) stays as it was.
    return np.where(np.isfinite(stored), stored, vectors).astype(np.float32)


class VectorCache:
    """float16 unit vectors by id, thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dim = 0
        self._rows: list[npt.NDArray[np.float16]] = []
        self._state: list[npt.NDArray[np.uint8]] = []
        self._held = 0
        self.complete = threading.Event()
        """Set once the bulk read after opening has offered every stored vector."""

    def __len__(self) -> int:
        return self._held

    def put(self, uid: int, vector: npt.NDArray[np.float32]) -> None:
        """Hold ``vector`` for a unit just inserted (overwrites whatever the slot had)."""
        self._write(np.asarray([uid], dtype=np.int64), np.asarray(vector, dtype=np.float32).reshape(1, -1),
                    only_unknown=False)

    def offer(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Hold vectors read from the store, for ids not known yet (never after a delete)."""
        if len(ids):
            self._write(np.asarray(ids, dtype=np.int64), np.asarray(vectors), only_unknown=True)

    def discard(self, ids: Iterable[int]) -> None:
        """Forget deleted units (their slots become absent)."""
        with self._lock:
            for uid in ids:
                block, row = divmod(int(uid), _BLOCK)
                if 0 <= block < len(self._state):
                    if self._state[block][row] == _HELD:
                        self._held -= 1
                    self._state[block][row] = _ABSENT

    def get(self, ids: Sequence[int]) -> tuple[dict[int, npt.NDArray[np.float32]], list[int]]:
        """(vectors held, as float32, by id; the ids not held)."""
        found: dict[int, npt.NDArray[np.float32]] = {}
        missing: list[int] = []
        if not ids:
            return found, missing
        arr = np.asarray(ids, dtype=np.int64)
        with self._lock:
            if not self._rows:
                return found, [int(i) for i in ids]
            blocks, rows = np.divmod(arr, _BLOCK)
            held = np.zeros(len(arr), dtype=bool)
            out = np.empty((len(arr), self._dim), dtype=np.float16)
            for block in np.unique(blocks).tolist():
                if not 0 <= block < len(self._rows):
                    continue
                where = np.flatnonzero(blocks == block)
                sel = rows[where]
                ok = self._state[block][sel] == _HELD
                held[where[ok]] = True
                out[where[ok]] = self._rows[block][sel[ok]]
        wide = np.take(_WIDEN, out.view(np.uint16))
        for i, uid in enumerate(arr.tolist()):
            if held[i]:
                found[uid] = wide[i]
            else:
                missing.append(uid)
        return found, missing

    def _write(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32], *,
               only_unknown: bool) -> None:
        if vectors.ndim != 2 or len(vectors) != len(ids):
            return
        with self._lock:
            if not self._dim:
                self._dim = int(vectors.shape[1])
            if vectors.shape[1] != self._dim or (ids < 0).any():
                return  # not this store's vectors: never hold them
            fits = np.abs(vectors).max(axis=1) < _FLOAT16_MAX
            if not fits.all():
                ids, vectors = ids[fits], vectors[fits]  # the others are read from SQLite
                if not len(ids):
                    return
            blocks, rows = np.divmod(ids, _BLOCK)
            need = int(blocks.max()) + 1
            while len(self._rows) < need:
                self._rows.append(np.zeros((_BLOCK, self._dim), dtype=np.float16))
                self._state.append(np.zeros(_BLOCK, dtype=np.uint8))
            for block in np.unique(blocks).tolist():
                where = np.flatnonzero(blocks == block)
                sel = rows[where]
                state = self._state[block]
                if only_unknown:
                    keep = state[sel] == _UNKNOWN
                    where, sel = where[keep], sel[keep]
                else:
                    self._held -= int((state[sel] == _HELD).sum())
                self._rows[block][sel] = vectors[where]
                state[sel] = _HELD
                self._held += len(sel)
