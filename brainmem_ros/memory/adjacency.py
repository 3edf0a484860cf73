"""Every unit's strongest edges in memory: the graph that spreading activation reads.

:meth:`SqliteStore.edges_of` answers with one SQLite query per unit of every hop's
frontier. :class:`Adjacency` holds the same answer for every unit in dense arrays
indexed by unit id, and keeps it equal to SQLite:

* it reads the edge table in bulk, in primary-key order, keeping each unit's strongest
  ``fanout`` edges (both directions). The read runs on a thread of its own, on a
  read-only snapshot of the store (:meth:`SqliteStore.reader`), so opening a store
  does not wait for it (~25 s at 1M units); until it is in, SQLite answers as before;
* after every transaction, still under the store's lock, the store tells it which
  units' edges changed (:meth:`SqliteStore.watch_edges`: triggers see every change,
  raw SQL and deletes cascading from units included). Those rows are marked stale and
  re-read from SQLite when next asked for; changes committed while a bulk read runs
  are remembered and marked stale when it is installed;
* edge decay is one stored factor (:class:`~brainmem_ros.memory.store.EdgeScale`):
  the arrays hold stored weights, as SQLite does, and answer with stored x scale,
  the product SQLite computes. A new scale keeps the order of association edges
  among themselves but moves them against structural ones (supersedes, evidence,
  which do not decay): rows holding both are re-sorted in place, and a full row
  whose unit has structural edges (a flag per row, set by the bulk read and by the
  store's report of new structural edges) goes stale, since only SQLite knows the
  edges it does not hold;
* a wholesale change (a renormalisation of the scale into the stored weights,
  :meth:`SqliteStore.rewriting_edges`) starts a new bulk read; SQLite answers
  while a renormalisation is under way.

Memory: per unit id, ``fanout`` entries of 13 bytes -- the other end (int32), the kind
and direction (int8) and the weight as float64, the exact value SQLite holds, so the
order and the activation it spreads are the same bit for bit -- plus a byte of flags:
157 bytes per unit at the default fanout of 12, 157 MB at 1M units.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

from brainmem_ros.errors import StoreError
from brainmem_ros.memory.adjacency_rows import (
    INCOMING,
    KIND_MASK,
    KINDS,
    MAX_ID,
    STALE,
    UNKNOWN_KIND,
    Rows,
    sparse_limit,
)
from brainmem_ros.memory.store import SqliteStore, edge_scale_of
from brainmem_ros.memory.store.edge_scan import scan_edges, unheld_destinations, unit_extent
from brainmem_ros.memory.types import Edge

_log = logging.getLogger(__name__)
# Rows beyond the largest id for the units stored next: a quarter more (at least 1024).
# Growing later runs inside a Store (0.2-0.5 s at 1M units); rows never written take
# no memory (zeroed pages are mapped when first touched).
_HEADROOM, _HEADROOM_SHARE = 1024, 4
_SCAN_ROWS = 250_000  # edges per bulk read: bounds the transient memory of a rebuild
_SPAN_BITS = 22  # src ids per bulk read, at most 2**22: src - start fits in the packed value
Ids = npt.NDArray[np.int64]


# Rows held in memory, as plain Python values: ids, other units, kind codes, effective weights.
HeldRows = tuple[list[int], list[list[int]], list[list[int]], list[list[float]]]


class Adjacency:
    """Each unit's strongest ``fanout`` edges in RAM, equal to SQLite after every commit.

    :meth:`edges_of` answers exactly as ``SqliteStore.edges_of(ids, fanout=...)`` does,
    in the same order. SQLite itself answers while the bulk read is not in, inside a
    transaction (whose writes are reported only when it ends, and may roll back), for
    a deeper fan-out than held, for ids without a row, and when the store cannot
    report edge changes. Thread-safe: every access holds the store's lock, the lock
    the store reports changes under.
    """

    def __init__(self, store: SqliteStore, *, fanout: int) -> None:
        if fanout < 1:
            msg = f'fanout must be at least 1, got {fanout}'
            raise ValueError(msg)
        self.store = store
        self.fanout = fanout
        self._rows = Rows(fanout)
        self._ready = False  # the rows are in: lookups may use them
        self._reading = 0  # generation of the bulk read under way (0: none); a newer one drops it
        self._generation = 0
        self._pending: set[int] = set()  # changed while the bulk read runs
        self._in = threading.Event()  # set when no bulk read is under way
        self._in.set()
        self._thread: threading.Thread | None = None
        #: Seconds the last bulk read took, until its rows were in use (None before).
        self.read_s: float | None = None
        with store.lock:
            self._open = store.watch_edges(self._changed)
            if self._open:
                self.reload()

    # -- reading -----------------------------------------------------------------------

    def edges_of(self, ids: Iterable[int], *, fanout: int | None = None) -> dict[int, list[Edge]]:
        """The strongest ``fanout`` edges of each unit (default: all it holds), both directions."""
        wanted, out, held = self._lookup(ids, fanout)
        if held is not None:
            for uid, row_o, row_c, row_w in zip(*held, strict=True):
                edges: list[Edge] = []
                for other, code, weight in zip(row_o, row_c, row_w, strict=True):
                    if not other:
                        break
                    kind = KINDS[code & KIND_MASK]
                    edges.append(Edge(other, uid, kind, weight) if code & INCOMING
                                 else Edge(uid, other, kind, weight))
                out[uid] = edges
        return {uid: out[uid] for uid in wanted}

    def neighbour_weights(self, ids: Iterable[int], *, fanout: int | None = None
                          ) -> dict[int, list[tuple[int, float]]]:
        """:meth:`edges_of` as (other unit, weight) pairs, in the same order: what spreading needs.

        Spreading activation reads a few thousand edges per Retrieve; building an
        :class:`Edge` for each only to take it apart again was a third of its time.
        """
        wanted, out, held = self._lookup(ids, fanout)
        pairs = {uid: [(e.dst if e.src == uid else e.src, e.weight) for e in edges]
                 for uid, edges in out.items()}
        if held is not None:
            for uid, row_o, _, row_w in zip(*held, strict=True):
                n = row_o.index(0) if 0 in row_o else len(row_o)
                pairs[uid] = list(zip(row_o[:n], row_w[:n], strict=True))
        return {uid: pairs[uid] for uid in wanted}

    def _lookup(self, ids: Iterable[int], fanout: int | None
                ) -> tuple[list[int], dict[int, list[Edge]], HeldRows | None]:
        """(the ids asked, edges read from SQLite, plain rows held in memory for the rest).

        The rows are (ids, other units, kind codes, effective weights), Python values taken
        under the store's lock; None when SQLite answered for every id.
        """
        k = self.fanout if fanout is None else fanout
        store = self.store
        wanted = list(dict.fromkeys(int(i) for i in ids))
        out: dict[int, list[Edge]] = {}
        with store.lock:
            if not self._ready or k > self.fanout or store.in_transaction:
                return wanted, store.edges_of(wanted, fanout=k), None
            store.settle_edges()  # changes made outside any transaction, if any
            scale = store.edge_scale()
            rows = self._rows
            if scale.below or rows.scale.below:
                # A renormalisation is under way (its end starts a new bulk read), or
                # these rows were read during one that has ended since.
                if not scale.below and not self._reading:
                    self.reload()
                return wanted, store.edges_of(wanted, fanout=k), None
            if scale.scale != rows.scale.scale:
                rows.rescale(scale)
            n = len(rows)
            held = np.asarray([i for i in wanted if 0 < i < n], dtype=np.int64)
            stale = (rows.flags[held] & STALE) != 0
            direct = [i for i in wanted if not 0 < i < n] + held[stale].tolist()
            if direct:
                for uid, read in store.edges_of(direct, fanout=self.fanout, stored=True).items():
                    if 0 < uid < n:
                        rows.hold(uid, read)
                    out[uid] = [Edge(e.src, e.dst, e.kind, e.weight * scale.factor(e.src, e.kind.value))
                                for e in read[:k]]
            fresh = held[~stale]
            # Plain Python values under the lock, Edge objects (or pairs) after it.
            others = rows.other[fresh, :k].tolist()
            codes = rows.code[fresh, :k].tolist()
            weights = rows.effective(rows.weight[fresh, :k], rows.code[fresh, :k]).tolist()
        return wanted, out, (fresh.tolist(), others, codes, weights)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait for the bulk read under way (tests, benchmarks); True when the rows are in use."""
        self._in.wait(timeout)
        return self._ready

    @property
    def ready(self) -> bool:
        """True when lookups are answered from memory (the bulk read is in)."""
        return self._ready

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return self._rows.nbytes

    @property
    def rows(self) -> int:
        """Unit ids with a row (ids from 0 up to this are held)."""
        return len(self._rows)

    @property
    def stale_rows(self) -> int:
        """Rows that will be re-read from SQLite when next asked for."""
        return int(np.count_nonzero(self._rows.flags & STALE))

    def close(self) -> None:
        """Stop watching the store, drop a bulk read under way, free the arrays."""
        with self.store.lock:
            self.store.unwatch_edges(self._changed)
            self._open = self._ready = False
            self._reading = 0  # the thread notices at its next chunk
            self._rows = Rows(self.fanout)
            thread = self._thread
        if thread is not None:
            thread.join(timeout=10.0)
        self._in.set()

    # -- keeping up with the store ------------------------------------------------------

    def reload(self) -> None:
        """Start a bulk read of every unit's strongest edges; SQLite answers until it is in."""
        with self.store.lock:
            if not self._open:
                return
            # The rows are dropped now rather than after the read: nothing uses them
            # meanwhile, and two sets at once would double the memory.
            self._ready = False
            self._rows = Rows(self.fanout)
            self._generation += 1
            self._reading = self._generation
            self._pending = set()  # recording starts before the snapshot is taken
            self._in.clear()
            self._thread = threading.Thread(target=self._read, args=(self._generation,),
                                            name='brainmem-adjacency', daemon=True)
            self._thread.start()

    def _read(self, generation: int) -> None:
        """The bulk read's thread: read a snapshot, then install it under the store's lock."""
        def current() -> bool:
            return self._reading == generation

        started = time.perf_counter()
        rows: Rows | None = None
        try:
            with self.store.reader() as db:
                rows = _read_rows(db, self.fanout, current)
        except StoreError as exc:
            _log.warning('in-memory graph not read (%s): edges are read from SQLite', exc)
        finally:
            with self.store.lock:
                # Not current: closed, or a newer read started (which will set _in).
                if current():
                    self._reading = 0
                    if rows is not None:
                        # Changes committed after the snapshot was taken (or just before:
                        # recording started first) are re-read when asked for.
                        rows.mark_stale(self._pending)
                        self._rows, self._ready = rows, True
                        self.read_s = time.perf_counter() - started
                    self._pending = set()
                    self._in.set()

    def _changed(self, ids: frozenset[int] | None) -> None:
        # The store's edge listener: runs under its lock when a transaction ends.
        if not self._open:
            return
        if ids is None:
            self.reload()
        elif self._ready:
            self._rows.mark_stale(ids)
        elif self._reading:
            self._pending |= ids


def _read_rows(db: sqlite3.Connection, fanout: int, current: Callable[[], bool]) -> Rows | None:
    """Every row from one pass over the edge table of ``db``; None once ``current()`` is False."""
    top, units = unit_extent(db)
    # SQLite hands out ids in order, so they are dense; should some be far beyond the
    # number of units, those are left to SQLite rather than given rows.
    top = min(top, MAX_ID, sparse_limit(units))
    rows = Rows(fanout, min(top + 1 + max(_HEADROOM, top // _HEADROOM_SHARE), MAX_ID + 1), edge_scale_of(db))
    # Every edge is read once, in primary-key order (which merge relies on).
    unknown = [rows.add_chunk(start, chunk) for start, chunk in scan_edges(
        db, kinds=[k.value for k in KINDS], unknown=UNKNOWN_KIND, max_id=MAX_ID,
        rows_per_read=_SCAN_ROWS, span_bits=_SPAN_BITS, current=current)]
    if not current():
        return None
    # Edges whose src cannot be held (not in 1..MAX_ID) make their dst's row unknown.
    unknown.append(unheld_destinations(db, max_id=MAX_ID))
    held = len(rows)
    for ids in unknown:
        rows.flags[ids[(ids > 0) & (ids < held)]] |= STALE
    return rows
