"""Edges between units: weights read through the edge scale, Hebbian updates, pruning."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence

from brainmem_ros.memory.store.codec import EdgeScale, edge_kind
from brainmem_ros.memory.store.sql import EFFECTIVE_SQL, STRUCTURAL_SQL, chunks, qmarks, valid_ids
from brainmem_ros.memory.store.watch import EdgeWatching
from brainmem_ros.memory.types import Edge, EdgeKind

_EDGE_SCALE_KEY = 'edge_scale'


def edge_scale_of(db: sqlite3.Connection) -> EdgeScale:
    """The edge scale as ``db`` sees it (a reader's snapshot)."""
    row = db.execute('SELECT value FROM meta WHERE key = ?', (_EDGE_SCALE_KEY,)).fetchone()
    return EdgeScale.parse(str(row[0]) if row else '')


class EdgeRows(EdgeWatching):
    """The ``edges`` table."""

    def edge_scale(self) -> EdgeScale:
        """The factor association edges are read with (see :class:`EdgeScale`)."""
        return EdgeScale.parse(self.get_meta(_EDGE_SCALE_KEY))

    def set_edge_scale(self, scale: EdgeScale) -> None:
        """Record a new factor (inside the current transaction, if any)."""
        self.set_meta(_EDGE_SCALE_KEY, scale.dump())

    def add_edges(self, edges: Iterable[Edge]) -> None:
        """Insert edges; an existing (src, dst, kind) keeps the larger weight."""
        with self.atomic() as db:
            scale = self.edge_scale()
            db.executemany(
                'INSERT INTO edges(src, dst, kind, weight) VALUES (?, ?, ?, ?) '
                'ON CONFLICT(src, dst, kind) DO UPDATE SET weight = MAX(weight, excluded.weight)',
                [(e.src, e.dst, e.kind.value, float(e.weight) / scale.factor(e.src, e.kind.value))
                 for e in edges if e.src != e.dst])

    def strengthen_edge(self, src: int, dst: int, kind: EdgeKind, gain: float) -> None:
        """Hebbian update: weight += gain * (1 - weight), creating the edge if absent."""
        with self.atomic() as db:
            # On stored weights w = weight / f: w += gain * (1 / f - w).
            inverse = 1.0 / self.edge_scale().factor(src, kind.value)
            db.execute(
                'INSERT INTO edges(src, dst, kind, weight) VALUES (?, ?, ?, ?) '
                'ON CONFLICT(src, dst, kind) DO UPDATE SET weight = weight + ? * (? - weight)',
                (src, dst, kind.value, gain * inverse, gain, inverse))

    def weaken_edge(self, src: int, dst: int, kind: EdgeKind, factor: float) -> None:
        """Multiply the stored weight of one edge by ``factor`` (no edge: nothing happens)."""
        with self.atomic() as db:
            db.execute('UPDATE edges SET weight = weight * ? WHERE src = ? AND dst = ? AND kind = ?',
                       (factor, src, dst, kind.value))

    def edges_of(self, ids: Sequence[int], *, fanout: int, stored: bool = False) -> dict[int, list[Edge]]:
        """The strongest ``fanout`` edges touching each unit, both directions.

        Equal weights are ordered by (src, dst, kind), so the answer is one list, the
        same one :class:`~brainmem_ros.memory.adjacency.Adjacency` holds. Weights are
        effective (scaled, :class:`EdgeScale`); ``stored``: as stored, in the same order.
        """
        out: dict[int, list[Edge]] = {}
        with self._lock:
            params = self.edge_scale().params
            pick = 'weight' if stored else 'eff'
            for uid in dict.fromkeys(ids):
                rows = self._query(
                    f'SELECT src, dst, kind, {pick} FROM ('
                    f' SELECT src, dst, kind, weight, {EFFECTIVE_SQL} AS eff FROM edges WHERE src = ?'
                    f' UNION ALL SELECT src, dst, kind, weight, {EFFECTIVE_SQL} FROM edges WHERE dst = ?'
                    ') ORDER BY eff DESC, src, dst, kind LIMIT ?', (*params, uid, *params, uid, fanout))
                out[uid] = [Edge(s, d, edge_kind(k), w) for s, d, k, w in rows]
        return out

    def association_edges(self, lo: int, hi: int) -> int:
        """Number of association (scaled) edges with ``lo <= src < hi``."""
        return int(self._query(f'SELECT COUNT(*) FROM edges WHERE src >= ? AND src < ? '
                              f'AND kind NOT IN {STRUCTURAL_SQL}', (lo, hi))[0][0])

    def prune_edges(self, lo: int, hi: int, *, below: float, limit: int) -> int:
        """Delete the weakest association edges with ``lo <= src < hi`` and an effective
        weight under ``below``, at most ``limit`` of them; returns how many."""
        if limit <= 0:
            return 0
        with self.atomic() as db:
            params = self.edge_scale().params
            return int(db.execute(
                'DELETE FROM edges WHERE (src, dst, kind) IN (SELECT src, dst, kind FROM edges '
                f'WHERE src >= ? AND src < ? AND kind NOT IN {STRUCTURAL_SQL} '
                f'AND {EFFECTIVE_SQL} < ? ORDER BY {EFFECTIVE_SQL}, src, dst, kind LIMIT ?)',
                (lo, hi, *params, below, *params, limit)).rowcount)

    def max_edge_src(self) -> int:
        """The largest source id of any edge (0 without edges)."""
        return int(self._query('SELECT COALESCE(MAX(src), 0) FROM edges')[0][0])

    def connected_units(self, lo: int, hi: int, *, low: float, high: float,
                        limit: int) -> list[tuple[int, int]]:
        """(edges, id) of the ``limit`` active, unprotected units with ``lo < id <= hi`` and a
        strength in [low, high] that touch most edges (more edges first, then smaller ids)."""
        return [(int(c), int(u)) for c, u in self._query(
            'SELECT (SELECT COUNT(*) FROM edges WHERE src = u.id)'
            ' + (SELECT COUNT(*) FROM edges WHERE dst = u.id AND src != u.id) AS c, u.id FROM units u '
            'WHERE u.id > ? AND u.id <= ? AND u.marginalized = 0 AND u.protected = 0 '
            'AND u.strength BETWEEN ? AND ? AND c > 0 ORDER BY c DESC, u.id LIMIT ?',
            (lo, hi, low, high, limit))]

    def renormalise_edges(self, hi: int) -> EdgeScale:
        """Fold the scale into the stored weights of edges with ``src < hi`` (next part).

        One part of a renormalisation: call with growing ``hi`` until the answer's
        ``below`` is 0. Rewritten weights keep their effective value bit for bit
        (w * f, the product every reader computed). Each part is one transaction, a
        wholesale change (:meth:`rewriting_edges`).
        """
        with self.atomic():
            scale = self.edge_scale()
            lo = scale.below
            top = self.max_edge_src()
            with self.rewriting_edges() as db:
                db.execute(f'UPDATE edges SET weight = weight * ? WHERE src >= ? AND src < ? '
                           f'AND kind NOT IN {STRUCTURAL_SQL}', (scale.scale, lo, hi))
            scale = EdgeScale() if hi > top else EdgeScale(scale.scale, hi)
            self.set_edge_scale(scale)
            return scale

    def edge_count(self) -> int:
        """Number of edges."""
        return int(self._query('SELECT COUNT(*) FROM edges')[0][0])

    def all_edges(self) -> Iterator[Edge]:
        """Every edge (export, pictures), with its effective weight."""
        params = self.edge_scale().params
        for s, d, k, w in self._query(f'SELECT src, dst, kind, {EFFECTIVE_SQL} FROM edges', params):
            yield Edge(s, d, edge_kind(k), w)

    def superseded_at(self, ids: Iterable[int]) -> dict[int, float]:
        """For each of ``ids`` a later memory superseded: the stamp of the first that did.

        Supersession is a SUPERSEDES edge from the new memory to the one whose facts it
        closed (the old memory stays valid; what it stated no longer holds).
        """
        out: dict[int, float] = {}
        for chunk in chunks(valid_ids(ids)):
            for dst, stamp in self._query(
                    'SELECT e.dst, MIN(u.stamp) FROM edges e JOIN units u ON u.id = e.src '
                    f"WHERE e.kind = 'supersedes' AND e.dst IN ({qmarks(len(chunk))}) GROUP BY e.dst", chunk):
                out[int(dst)] = float(stamp)
        return out

