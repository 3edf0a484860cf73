"""What would remove the costs: prototypes of the proposed changes, measured on the same stores.

Benchmark code only; nothing here changes the package. Retrieve variants, run on a
scratch copy of each benchmark store:

1. *shipped*: ``Retriever.run`` as ``BrainMem`` opens it, edges from the in-memory
   :class:`~brainmem_ros.memory.adjacency.Adjacency` (``links.in_memory_graph``);
2. *edges from SQLite per unit*: the same without it (``links.in_memory_graph: false``),
   one SQL query per unit of each hop's frontier;
3. *batched edge query per hop*: one SQL query per hop for the whole frontier
   (``ROW_NUMBER()`` keeps each unit's strongest ``fanout`` edges) instead of one per unit;
4. *+ bounded lexical recall*: shipped, with BM25 over the FTS5 matches among the newest
   ``LEXICAL_WINDOW`` units (a rowid range FTS5 seeks to) instead of over all matches.

``python -m bench.whatif [--sizes 100000 1000000]``
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import copy_store, ensure_store, load_embedder, record, summary_ms, table
from bench.corpus import Corpus, queries
from bench.dbfile import file_rows
from brainmem_ros.encoders.base import Embedder
from brainmem_ros.memory import BrainMem, MemoryConfig
from brainmem_ros.memory.adjacency import Adjacency
from brainmem_ros.memory.graph import edge_pairs
from brainmem_ros.memory.retrieval import Query, Retriever
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import (
    Edge,
    EdgeKind,
    MemoryUnit,
    Pose,
    UnitFilter,
    UnitType,
)

LEXICAL_WINDOW = 50_000
N_QUERIES = 150


def edges_batched(store: SqliteStore, ids: Sequence[int], *, fanout: int) -> dict[int, list[Edge]]:
    """The strongest ``fanout`` edges of every unit in ``ids``, one query per 400 units."""
    out: dict[int, list[Edge]] = {int(i): [] for i in ids}
    id_list = list(out)
    for start in range(0, len(id_list), 400):
        chunk = id_list[start:start + 400]
        marks = ','.join('?' * len(chunk))
        with store.reading() as db:
            found = db.execute(
                'SELECT u, src, dst, kind, weight FROM ('
                ' SELECT u, src, dst, kind, weight,'
                '  ROW_NUMBER() OVER (PARTITION BY u ORDER BY weight DESC, src, dst, kind) AS rn FROM ('
                f'  SELECT src AS u, src, dst, kind, weight FROM edges WHERE src IN ({marks})'
                f'  UNION ALL SELECT dst AS u, src, dst, kind, weight FROM edges WHERE dst IN ({marks})))'
                ' WHERE rn <= ?', (*chunk, *chunk, fanout)).fetchall()
        for u, s, d, k, w in found:
            out[u].append(Edge(s, d, EdgeKind(k), w))
    return out


_LIGHT = ('id, stamp, type, episode_id, importance, strength, valence, last_access, marginalized, '
          'valid_from, valid_until, pose_frame, pose_x, pose_y')


def light_units(store: SqliteStore, ids: Sequence[int]) -> dict[int, MemoryUnit]:
    """Units with the columns filters and rerank read, and no JSON (text and entities empty)."""
    out: dict[int, MemoryUnit] = {}
    id_list = list(dict.fromkeys(int(i) for i in ids))
    for start in range(0, len(id_list), 500):
        chunk = id_list[start:start + 500]
        with store.reading() as db:
            found = db.execute(f'SELECT {_LIGHT} FROM units WHERE id IN ({",".join("?" * len(chunk))})',
                               chunk).fetchall()
        for (uid, stamp, utype, episode, importance, strength, valence, last_access, marg,
             valid_from, valid_until, frame, x, y) in found:
            out[uid] = MemoryUnit(id=uid, stamp=stamp, text='', type=UnitType(utype), episode_id=episode,
                                  importance=importance, strength=strength, valence=valence,
                                  last_access=last_access, marginalized=bool(marg),
                                  pose=Pose(x, y, frame=frame) if frame is not None else None,
                                  valid_from=valid_from, valid_until=valid_until)
    return out


class BatchedRetriever(Retriever):
    """``Retriever.run`` with edges from one batched SQL query per hop."""

    def neighbours(self, ids: Sequence[int]) -> Mapping[int, Sequence[tuple[int, float]]]:
        """Each unit's strongest ``fanout`` edges, one query per 400 units."""
        return edge_pairs(edges_batched(self.store, ids, fanout=self.config.fanout))


def windowed_fts(store: SqliteStore) -> Any:
    """``fts_window`` restricted to the newest LEXICAL_WINDOW units (unfiltered queries only)."""
    def search(match: str, *, limit: int, unit_filter: UnitFilter
               ) -> tuple[list[tuple[int, float]], dict[int, float]]:
        cond = '' if unit_filter.include_marginalized else 'AND u.marginalized = 0'
        floor = store.max_id() - LEXICAL_WINDOW
        with store.reading() as db:
            best = [(r[0], -r[1]) for r in db.execute(
                f'SELECT f.rowid, bm25(units_fts) FROM units_fts f JOIN units u ON u.id = f.rowid '
                f'WHERE units_fts MATCH ? AND f.rowid > ? {cond} ORDER BY bm25(units_fts) LIMIT ?',
                (match, floor, limit)).fetchall()]
        return best, dict(best)
    return search


def retrieve_variants(store: Path, embedder: Embedder) -> dict[str, Any]:
    """CPU time per query of each variant and the overlap of its top-10 with the shipped one.

    CPU time, not wall time: the variants are compared with each other, and on a shared
    machine the wall time of each call mostly measures the neighbours' load.
    """
    qs = [Query(query=b.query, goal=b.goal, state=b.state, top_k=10) for b in queries(N_QUERIES, seed=23)]
    out: dict[str, Any] = {}
    # Opened without the in-memory graph, which is then read here as BrainMem reads it
    # at open: timed on its own, and the same object serves the shipped variants.
    config = MemoryConfig.from_mapping({'links.in_memory_graph': False})
    with BrainMem.open(store, config, embedder=embedder) as mem:
        now = float(file_rows(mem.store_db.path, 'SELECT MAX(stamp) FROM units')[0][0]) + 3600.0
        sqlite_edges = mem.retriever
        shipped_fts = mem.store_db.fts_window
        t = time.perf_counter()
        adjacency = Adjacency(mem.store_db, fanout=sqlite_edges.config.fanout)
        if not adjacency.wait_ready():  # the bulk read runs on a thread of its own
            msg = 'the in-memory graph could not be read'
            raise RuntimeError(msg)
        adjacency_s = time.perf_counter() - t
        shipped = Retriever(mem.store_db, mem.index, embedder, sqlite_edges.config, adjacency=adjacency)
        variants: list[tuple[str, Retriever, bool]] = [
            ('shipped', shipped, False),
            ('edges from SQLite per unit', sqlite_edges, False),
            ('batched edge query per hop', BatchedRetriever(mem.store_db, mem.index, embedder,
                                                            sqlite_edges.config), False),
            ('+ bounded lexical recall', shipped, True),
        ]
        def run(i: int, q: Query) -> tuple[float, list[int]]:
            _, retriever, window = variants[i]
            mem.store_db.fts_window = windowed_fts(mem.store_db) if window else shipped_fts  # type: ignore[method-assign]
            c = time.thread_time()
            res = retriever.run(q, now=now)
            return time.thread_time() - c, [r.unit.id for r in res]

        for q in qs[:5]:
            for i in range(len(variants)):
                run(i, q)
        lat: list[list[float]] = [[] for _ in variants]
        tops: list[list[list[int]]] = [[] for _ in variants]
        # Round robin, starting with a different variant each query: the noise of a
        # shared machine and the page cache's warm-up fall on every variant alike.
        for j, q in enumerate(qs):
            for step in range(len(variants)):
                i = (j + step) % len(variants)
                seconds, ids = run(i, q)
                lat[i].append(seconds)
                tops[i].append(ids)
        for i, (name, _, _) in enumerate(variants):
            overlap = float(np.mean([len(set(a) & set(b)) / max(1, len(a))
                                     for a, b in zip(tops[0], tops[i], strict=True)]))
            out[name] = {**summary_ms(lat[i]), 'overlap': overlap}
            print(f'  {name}: p50 {out[name]["p50"]:.1f} ms p99 {out[name]["p99"]:.1f} ms '
                  f'overlap {overlap:.2f}', flush=True)
        mem.store_db.fts_window = shipped_fts  # type: ignore[method-assign]
        out['adjacency_build_s'] = adjacency_s
        out['adjacency_bytes'] = adjacency.nbytes
        out['adjacency_bytes_per_unit'] = adjacency.nbytes / max(1, mem.store_db.max_id())
        adjacency.close()
    return out


def main(argv: list[str] | None = None) -> None:
    """Run the what-if prototypes."""
    parser = argparse.ArgumentParser(prog='python -m bench.whatif')
    parser.add_argument('--sizes', type=int, nargs='+', default=[100_000, 1_000_000])
    args = parser.parse_args(argv)
    embedder = load_embedder()
    corpus = Corpus(embedder)
    for n in args.sizes:
        ensure_store(corpus, n)
        store = copy_store(n, 'whatif')  # opening a store writes to it: never the shared one
        print(f'[{n}] what if', flush=True)
        try:
            variants = retrieve_variants(store, embedder)
        finally:
            shutil.rmtree(store, ignore_errors=True)  # 4 GB at 1M
        extra = {k: variants.pop(k) for k in ('adjacency_build_s', 'adjacency_bytes',
                                              'adjacency_bytes_per_unit')}
        record('whatif', str(n), {'variants': variants, **extra})
        print(table(['variant', 'CPU p50 ms', 'CPU p99 ms', 'overlap'],
                    [(k, f'{v["p50"]:.1f}', f'{v["p99"]:.1f}', f'{v["overlap"]:.2f}')
                     for k, v in variants.items()]))


if __name__ == '__main__':
    main()
