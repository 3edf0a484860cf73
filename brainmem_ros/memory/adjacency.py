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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from brainmem_ros.errors import StoreError
from brainmem_ros.memory.store import STRUCTURAL_KINDS, EdgeScale, SqliteStore, edge_scale_of
from brainmem_ros.memory.types import Edge, EdgeKind

_log = logging.getLogger(__name__)

# Kinds are coded in the order of their names: SQLite breaks weight ties by
# (src, dst, kind), and the arrays must break them the same way.
_KINDS: tuple[EdgeKind, ...] = tuple(sorted(EdgeKind, key=lambda k: k.value))
_KIND_CODE = {k: i for i, k in enumerate(_KINDS)}
_KIND_MASK = 0x0F
_UNKNOWN_KIND = _KIND_MASK  # a kind this version does not know: such rows stay in SQLite
_INCOMING = 0x10  # the row's unit is the edge's dst
_STRUCTURAL_CODES = np.asarray([_KIND_CODE[EdgeKind(k)] for k in STRUCTURAL_KINDS], dtype=np.int8)
# Row flags: re-read from SQLite when asked for; the unit has (or had) a structural edge.
_STALE, _HAS_STRUCTURAL = 1, 2
assert len(_KINDS) < _UNKNOWN_KIND

_MAX_ID = 2**31 - 1  # the other end is held as int32; larger ids are SQLite's to answer
_HEADROOM = 1024  # rows beyond the largest id, for the units stored next
_SCAN_ROWS = 250_000  # edges per bulk read: bounds the transient memory of a rebuild
_SPAN_BITS = 22  # src ids per bulk read, at most 2**22: src - start fits in the packed value
_KIND_SQL = ('CASE kind ' + ' '.join(f"WHEN '{k.value}' THEN {i}" for i, k in enumerate(_KINDS))
             + f' ELSE {_UNKNOWN_KIND} END')
# Two values per edge: reading SQLite from Python costs per value, and most of a bulk
# read is that. (src - start) << 36 | dst << 4 | kind code, with dst 0 and the unknown
# kind when dst cannot be held; and the weight.
_SCAN_SQL = (f'SELECT ((src - ?) << 36) | CASE WHEN dst BETWEEN 1 AND {_MAX_ID} '
             f'THEN (dst << 4) | {_KIND_SQL} ELSE {_UNKNOWN_KIND} END, weight '
             'FROM edges WHERE src >= ? AND src < ?')
_SCAN_DTYPE = np.dtype([('packed', np.int64), ('weight', np.float64)])

Ids = npt.NDArray[np.int64]


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
        self._rows = _Rows(fanout)
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
        k = self.fanout if fanout is None else fanout
        store = self.store
        wanted = list(dict.fromkeys(int(i) for i in ids))
        out: dict[int, list[Edge]] = {}
        with store.lock:
            if not self._ready or k > self.fanout or store.in_transaction:
                return store.edges_of(wanted, fanout=k)
            store.settle_edges()  # changes made outside any transaction, if any
            scale = store.edge_scale()
            rows = self._rows
            if scale.below or rows.scale.below:
                # A renormalisation is under way (its end starts a new bulk read), or
                # these rows were read during one that has ended since.
                if not scale.below and not self._reading:
                    self.reload()
                return store.edges_of(wanted, fanout=k)
            if scale.scale != rows.scale.scale:
                rows.rescale(scale)
            n = len(rows)
            held = np.asarray([i for i in wanted if 0 < i < n], dtype=np.int64)
            stale = (rows.flags[held] & _STALE) != 0
            direct = [i for i in wanted if not 0 < i < n] + held[stale].tolist()
            if direct:
                for uid, read in store.edges_of(direct, fanout=self.fanout, stored=True).items():
                    if 0 < uid < n:
                        rows.hold(uid, read)
                    out[uid] = [Edge(e.src, e.dst, e.kind, e.weight * scale.factor(e.src, e.kind.value))
                                for e in read[:k]]
            fresh = held[~stale]
            # Plain Python values under the lock, Edge objects after it.
            others = rows.other[fresh, :k].tolist()
            codes = rows.code[fresh, :k].tolist()
            weights = rows.effective(rows.weight[fresh, :k], rows.code[fresh, :k]).tolist()
        for uid, row_o, row_c, row_w in zip(fresh.tolist(), others, codes, weights, strict=True):
            edges: list[Edge] = []
            for other, code, weight in zip(row_o, row_c, row_w, strict=True):
                if not other:
                    break
                kind = _KINDS[code & _KIND_MASK]
                edges.append(Edge(other, uid, kind, weight) if code & _INCOMING
                             else Edge(uid, other, kind, weight))
            out[uid] = edges
        return {uid: out[uid] for uid in wanted}

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
        return int(np.count_nonzero(self._rows.flags & _STALE))

    def close(self) -> None:
        """Stop watching the store, drop a bulk read under way, free the arrays."""
        with self.store.lock:
            self.store.unwatch_edges(self._changed)
            self._open = self._ready = False
            self._reading = 0  # the thread notices at its next chunk
            self._rows = _Rows(self.fanout)
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
            self._rows = _Rows(self.fanout)
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
        rows: _Rows | None = None
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


class _Rows:
    """The arrays: row ``uid`` holds unit ``uid``'s strongest edges, strongest first."""

    def __init__(self, fanout: int, rows: int = 0, scale: EdgeScale | None = None) -> None:
        self.fanout = fanout
        self.other = np.zeros((rows, fanout), dtype=np.int32)  # 0: an empty slot
        self.code = np.zeros((rows, fanout), dtype=np.int8)
        # Stored weights (SQLite's own values); rows are ordered by the effective
        # weights under ``scale``.
        self.weight = np.zeros((rows, fanout), dtype=np.float64)
        self.flags = np.zeros(rows, dtype=np.uint8)  # _STALE, _HAS_STRUCTURAL
        self.scale = EdgeScale() if scale is None else scale

    def __len__(self) -> int:
        return len(self.flags)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.other, self.code, self.weight, self.flags))

    def effective(self, weight: npt.NDArray[np.float64],
                  code: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
        """Effective weights of stored ones: the product SQLite computes, bit for bit."""
        structural = np.isin(code & _KIND_MASK, _STRUCTURAL_CODES)
        return weight * np.where(structural, 1.0, self.scale.scale)

    def mark_stale(self, ids: Iterable[int]) -> None:
        """Mark rows stale; a negative id ``-u`` flags unit ``u`` as having a structural edge."""
        ids = list(ids)
        if not ids:
            return
        rows = len(self)
        top = max(abs(i) for i in ids)
        # Unit ids are handed out in order, so a new one is just past the last row; an
        # id far beyond it stays SQLite's (see _read_rows).
        if rows <= top <= min(_MAX_ID, _sparse_limit(rows)):
            self.grow(max(top + 1, rows + rows // 4))
            rows = len(self)
        self.flags[np.fromiter((i for i in ids if 0 < i < rows), dtype=np.int64)] |= _STALE
        self.flags[np.fromiter((-i for i in ids if 0 < -i < rows), dtype=np.int64)] |= _HAS_STRUCTURAL

    def rescale(self, scale: EdgeScale) -> None:
        """Order the rows by the effective weights under a new ``scale`` (no renormalisation).

        Association edges keep their order among themselves (one factor for all), but
        move against structural ones. A row holding both is re-sorted; a full row whose
        unit has structural edges may now rank one it does not hold: it goes stale.
        """
        k = self.fanout
        self.scale = scale
        # Only flagged rows can hold a structural edge: the work is theirs, not the store's.
        flagged = np.flatnonzero(self.flags & _HAS_STRUCTURAL)
        if not flagged.size:
            return
        used = self.other[flagged] != 0
        structural = np.isin(self.code[flagged] & _KIND_MASK, _STRUCTURAL_CODES) & used
        self.flags[flagged[used[:, k - 1]]] |= _STALE
        mixed = flagged[structural.any(axis=1) & (used & ~structural).any(axis=1)]
        if not mixed.size:
            return
        other, code = self.other[mixed], self.code[mixed]
        keep = other != 0
        unit = np.repeat(mixed, keep.sum(axis=1))
        other, code, weight = other[keep].astype(np.int64), code[keep], self.weight[mixed][keep]
        incoming = (code & _INCOMING) != 0
        src, dst = np.where(incoming, other, unit), np.where(incoming, unit, other)
        # SQLite's order: effective weight descending, then (src, dst, kind); kind
        # codes follow the names.
        order = np.lexsort((code & _KIND_MASK, dst, src, -self.effective(weight, code), unit))
        ordered = unit[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        slot = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
        self.other[ordered, slot] = other[order]
        self.code[ordered, slot] = code[order]
        self.weight[ordered, slot] = weight[order]

    def grow(self, rows: int) -> None:
        """More rows (geometric growth keeps the copies rare); new rows are stale until read."""
        rows = min(rows, _MAX_ID + 1)
        keep = len(self)

        def grown(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
            b = np.zeros((rows, *a.shape[1:]), dtype=a.dtype)
            b[:keep] = a
            return b

        self.other, self.code, self.weight = grown(self.other), grown(self.code), grown(self.weight)
        flags = np.full(rows, _STALE, dtype=np.uint8)
        flags[:keep] = self.flags
        self.flags = flags

    def hold(self, uid: int, edges: Sequence[Edge]) -> None:
        """Store one unit's row as SQLite just gave it (unless it names an id too large to hold)."""
        k = self.fanout
        other, code, weight = [0] * k, [0] * k, [0.0] * k
        for j, e in enumerate(edges[:k]):
            incoming = e.src != uid
            other[j] = e.src if incoming else e.dst
            if not 0 < other[j] <= _MAX_ID:
                return  # stays stale: SQLite answers for this unit every time
            code[j] = _KIND_CODE[e.kind] | (_INCOMING if incoming else 0)
            weight[j] = e.weight
        self.other[uid], self.code[uid], self.weight[uid] = other, code, weight
        structural = any(e.kind.value in STRUCTURAL_KINDS for e in edges[:k])
        self.flags[uid] = (self.flags[uid] & (0xFF ^ _STALE)) | (_HAS_STRUCTURAL if structural else 0)

    def add_chunk(self, start: int, chunk: npt.NDArray[Any]) -> Ids:
        """Merge a chunk of scanned edges into the rows of both ends; returns rows it cannot hold."""
        packed, weight = chunk['packed'], chunk['weight']
        src = (packed >> 36) + start
        dst = (packed >> 4) & 0xFFFFFFFF
        kind = (packed & _KIND_MASK).astype(np.int8)
        bad = kind == _UNKNOWN_KIND  # also a dst that cannot be held (then 0)
        structural = np.isin(kind, _STRUCTURAL_CODES)
        if structural.any():
            ends = np.concatenate([src[structural], dst[structural]])
            self.flags[ends[(ends > 0) & (ends < len(self))]] |= _HAS_STRUCTURAL
        unknown = np.concatenate([src[bad], dst[bad]])
        if unknown.size:
            good = ~bad
            src, dst, weight, kind = src[good], dst[good], weight[good], kind[good]
        # Each edge gives two entries, interleaved (src's, then dst's) so that every
        # row's new entries stay in scan order; see merge.
        n = src.size
        unit, other = np.empty(2 * n, dtype=np.int64), np.empty(2 * n, dtype=np.int64)
        code, weight2 = np.empty(2 * n, dtype=np.int8), np.repeat(weight, 2)
        unit[0::2], unit[1::2] = src, dst
        other[0::2], other[1::2] = dst, src
        code[0::2], code[1::2] = kind, kind | _INCOMING
        self.merge(unit, other, code, weight2)
        return unknown

    def merge(self, unit: Ids, other: Ids, code: npt.NDArray[np.int8],
              weight: npt.NDArray[np.float64]) -> None:
        """Merge new entries (one per edge end, in scan order) into the rows, keeping the strongest.

        Ties need no key of their own. SQLite orders equal weights by (src, dst, kind),
        the order the scan reads edges in: within one row, entries in scan order are in
        tie order (incoming edges from smaller ids, the unit's own edges, incoming edges
        from larger ids), and every entry of this chunk comes after every entry of earlier
        chunks, which the row holds already. So a stable sort by (unit, weight
        descending) of [held entries, new entries] is SQLite's order, and a new entry
        that only ties a full row's weakest loses to it.
        """
        k = self.fanout
        inside = unit < len(self)
        # Most entries of a large store stop here, unsorted: their row is full of
        # stronger ones.
        last = unit[inside]
        inside[inside] = ((self.other[last, k - 1] == 0)
                          | (self.effective(weight[inside], code[inside])
                             > self.effective(self.weight[last, k - 1], self.code[last, k - 1])))
        unit, other, code, weight = unit[inside], other[inside], code[inside], weight[inside]
        if not unit.size:
            return
        rows = np.unique(unit[self.other[unit, 0] != 0])  # rows holding entries already
        old = self.other[rows]
        held = old != 0
        unit = np.concatenate([np.repeat(rows, held.sum(axis=1)), unit])
        other = np.concatenate([old[held], other])
        code = np.concatenate([self.code[rows][held], code])
        weight = np.concatenate([self.weight[rows][held], weight])
        order = np.lexsort((-self.effective(weight, code), unit))  # stable: ties keep the order above
        ordered = unit[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        rank = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
        take = rank < k
        pick, slot = order[take], rank[take]
        # A row only gains entries here: its new first ranks cover every slot it used.
        self.other[unit[pick], slot] = other[pick]
        self.code[unit[pick], slot] = code[pick]
        self.weight[unit[pick], slot] = weight[pick]


def _read_rows(db: sqlite3.Connection, fanout: int, current: Callable[[], bool]) -> _Rows | None:
    """Every row from one pass over the edge table of ``db``; None once ``current()`` is False."""
    (top, units), = db.execute('SELECT COALESCE(MAX(id), 0), COUNT(*) FROM units').fetchall()
    # SQLite hands out ids in order, so they are dense; should some be far beyond the
    # number of units, those are left to SQLite rather than given rows.
    top = min(top, _MAX_ID, _sparse_limit(units))
    rows = _Rows(fanout, min(top + 1 + _HEADROOM, _MAX_ID + 1), edge_scale_of(db))
    unknown: list[Ids] = []
    # Ranges of src ids sized to ~_SCAN_ROWS edges each (a unit has a few dozen):
    # every edge is read once, in primary-key order (which merge relies on).
    start, span = 1, max(1, _SCAN_ROWS // 32)
    while start <= _MAX_ID:
        if not current():
            return None
        span = min(span, 1 << _SPAN_BITS, _MAX_ID + 1 - start)
        chunk = db.execute(_SCAN_SQL, (start, start, start + span)).fetchall()
        if chunk:
            unknown.append(rows.add_chunk(start, np.fromiter(chunk, dtype=_SCAN_DTYPE, count=len(chunk))))
            start += span
            span = max(1, span * _SCAN_ROWS // len(chunk))
            continue
        # No edge leaves these ids: go on from the next src there is.
        (after,), = db.execute('SELECT MIN(src) FROM edges WHERE src >= ?', (start + span,)).fetchall()
        if after is None:
            break
        start, span = int(after), 2 * span
    # Edges whose src cannot be held (not in 1.._MAX_ID) make their dst's row unknown.
    unknown.append(np.asarray([r[0] for r in db.execute(
        'SELECT dst FROM edges WHERE src < 1 UNION SELECT dst FROM edges WHERE src > ?', (_MAX_ID,))],
        dtype=np.int64))
    held = len(rows)
    for ids in unknown:
        rows.flags[ids[(ids > 0) & (ids < held)]] |= _STALE
    return rows


def _sparse_limit(units: int) -> int:
    """The largest id given a row when ``units`` ids are in use."""
    return 2 * units + (1 << 20)
