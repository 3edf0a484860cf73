"""The arrays of the in-memory graph: row ``uid`` holds unit ``uid``'s strongest edges.

Per unit id, ``fanout`` entries of 13 bytes -- the other end (int32), the kind and
direction (int8) and the weight as float64, the exact value SQLite holds, so the order
and the activation it spreads are the same bit for bit -- plus a byte of flags. See
:mod:`brainmem_ros.memory.adjacency` for how they are kept equal to SQLite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from brainmem_ros.memory.store import STRUCTURAL_KINDS, EdgeScale
from brainmem_ros.memory.types import Edge, EdgeKind

# Kinds are coded in the order of their names: SQLite breaks weight ties by
# (src, dst, kind), and the arrays must break them the same way.
KINDS: tuple[EdgeKind, ...] = tuple(sorted(EdgeKind, key=lambda k: k.value))
KIND_CODE = {k: i for i, k in enumerate(KINDS)}
KIND_MASK = 0x0F
UNKNOWN_KIND = KIND_MASK  # a kind this version does not know: such rows stay in SQLite
INCOMING = 0x10  # the row's unit is the edge's dst
STRUCTURAL_CODES = np.asarray([KIND_CODE[EdgeKind(k)] for k in STRUCTURAL_KINDS], dtype=np.int8)
# Row flags: re-read from SQLite when asked for; the unit has (or had) a structural edge.
STALE, HAS_STRUCTURAL = 1, 2
assert len(KINDS) < UNKNOWN_KIND

MAX_ID = 2**31 - 1  # the other end is held as int32; larger ids are SQLite's to answer
Ids = npt.NDArray[np.int64]


def sparse_limit(units: int) -> int:
    """The largest id given a row when ``units`` ids are in use."""
    return 2 * units + (1 << 20)


class Rows:
    """The arrays: row ``uid`` holds unit ``uid``'s strongest edges, strongest first."""

    def __init__(self, fanout: int, rows: int = 0, scale: EdgeScale | None = None) -> None:
        self.fanout = fanout
        self.other = np.zeros((rows, fanout), dtype=np.int32)  # 0: an empty slot
        self.code = np.zeros((rows, fanout), dtype=np.int8)
        # Stored weights (SQLite's own values); rows are ordered by the effective
        # weights under ``scale``.
        self.weight = np.zeros((rows, fanout), dtype=np.float64)
        self.flags = np.zeros(rows, dtype=np.uint8)  # STALE, HAS_STRUCTURAL
        self.scale = EdgeScale() if scale is None else scale

    def __len__(self) -> int:
        return len(self.flags)

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return sum(a.nbytes for a in (self.other, self.code, self.weight, self.flags))

    def effective(self, weight: npt.NDArray[np.float64],
                  code: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
        """Effective weights of stored ones: the product SQLite computes, bit for bit."""
        structural = np.isin(code & KIND_MASK, STRUCTURAL_CODES)
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
        if rows <= top <= min(MAX_ID, sparse_limit(rows)):
            self.grow(max(top + 1, rows + rows // 4))
            rows = len(self)
        self.flags[np.fromiter((i for i in ids if 0 < i < rows), dtype=np.int64)] |= STALE
        self.flags[np.fromiter((-i for i in ids if 0 < -i < rows), dtype=np.int64)] |= HAS_STRUCTURAL

    def rescale(self, scale: EdgeScale) -> None:
        """Order the rows by the effective weights under a new ``scale`` (no renormalisation).

        Association edges keep their order among themselves (one factor for all), but
        move against structural ones. A row holding both is re-sorted; a full row whose
        unit has structural edges may now rank one it does not hold: it goes stale.
        """
        k = self.fanout
        self.scale = scale
        # Only flagged rows can hold a structural edge: the work is theirs, not the store's.
        flagged = np.flatnonzero(self.flags & HAS_STRUCTURAL)
        if not flagged.size:
            return
        used = self.other[flagged] != 0
        structural = np.isin(self.code[flagged] & KIND_MASK, STRUCTURAL_CODES) & used
        self.flags[flagged[used[:, k - 1]]] |= STALE
        mixed = flagged[structural.any(axis=1) & (used & ~structural).any(axis=1)]
        if not mixed.size:
            return
        other, code = self.other[mixed], self.code[mixed]
        keep = other != 0
        unit = np.repeat(mixed, keep.sum(axis=1))
        other, code, weight = other[keep].astype(np.int64), code[keep], self.weight[mixed][keep]
        incoming = (code & INCOMING) != 0
        src, dst = np.where(incoming, other, unit), np.where(incoming, unit, other)
        # SQLite's order: effective weight descending, then (src, dst, kind); kind
        # codes follow the names.
        order = np.lexsort((code & KIND_MASK, dst, src, -self.effective(weight, code), unit))
        ordered = unit[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        slot = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
        self.other[ordered, slot] = other[order]
        self.code[ordered, slot] = code[order]
        self.weight[ordered, slot] = weight[order]

    def grow(self, rows: int) -> None:
        """More rows (geometric growth keeps it rare); new rows are stale until read.

        It runs under the store's lock, inside a Store. Each array is enlarged in place
        when nothing else refers to it: the allocator then moves a large block's pages
        instead of copying them (a 1M-row graph of fan-out 12 grew by a quarter in 0.15 s
        in place, 0.50 s as a copy; a one-off timing, 2026-12-02).
        """
        rows = min(rows, MAX_ID + 1)
        keep = len(self)
        for name in ('other', 'code', 'weight', 'flags'):
            shape = (rows, *getattr(self, name).shape[1:])
            try:
                getattr(self, name).resize(shape, refcheck=True)  # new entries are zero
            except ValueError:  # a view or another reference holds the array: copy it
                old = getattr(self, name)
                enlarged = np.zeros(shape, dtype=old.dtype)
                enlarged[:keep] = old
                setattr(self, name, enlarged)
        self.flags[keep:] = STALE

    def hold(self, uid: int, edges: Sequence[Edge]) -> None:
        """Store one unit's row as SQLite just gave it (unless it names an id too large to hold)."""
        k = self.fanout
        other, code, weight = [0] * k, [0] * k, [0.0] * k
        for j, e in enumerate(edges[:k]):
            incoming = e.src != uid
            other[j] = e.src if incoming else e.dst
            if not 0 < other[j] <= MAX_ID:
                return  # stays stale: SQLite answers for this unit every time
            code[j] = KIND_CODE[e.kind] | (INCOMING if incoming else 0)
            weight[j] = e.weight
        self.other[uid], self.code[uid], self.weight[uid] = other, code, weight
        structural = any(e.kind.value in STRUCTURAL_KINDS for e in edges[:k])
        self.flags[uid] = (self.flags[uid] & (0xFF ^ STALE)) | (HAS_STRUCTURAL if structural else 0)

    def add_chunk(self, start: int, chunk: npt.NDArray[Any]) -> Ids:
        """Merge a chunk of scanned edges into the rows of both ends; returns rows it cannot hold."""
        packed, weight = chunk['packed'], chunk['weight']
        src = (packed >> 36) + start
        dst = (packed >> 4) & 0xFFFFFFFF
        kind = (packed & KIND_MASK).astype(np.int8)
        bad = kind == UNKNOWN_KIND  # also a dst that cannot be held (then 0)
        structural = np.isin(kind, STRUCTURAL_CODES)
        if structural.any():
            ends = np.concatenate([src[structural], dst[structural]])
            self.flags[ends[(ends > 0) & (ends < len(self))]] |= HAS_STRUCTURAL
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
        code[0::2], code[1::2] = kind, kind | INCOMING
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
