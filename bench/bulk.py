"""Build a BrainMem store of N corpus units fast: bulk SQLite writes, in-memory linking.

``BrainMem`` has no bulk loader, and ``BrainMem.store`` per unit would take about an
hour per 100k units (encoder, one fsync'd transaction and index lookups each). This
writes through the store's own API (:meth:`SqliteStore.insert_unit`,
:meth:`SqliteStore.add_edges`), one transaction per batch, and links each unit the
way :func:`brainmem_ros.memory.graph.link_candidates` does, from in-memory
equivalents of its three lookups:

- temporal: the previous ``temporal_links`` units of the episode within the window;
- entity: the ``entity_links`` most recent units per entity key, weighted by overlap;
- similar: the 3 most recent units of the same vocabulary sentence (a unit's nearest
  vector neighbours are mostly these), kept at cosine >= ``similar_threshold``.

The strongest ``max_links`` survive, as in the real path. Facts/supersedes are not
derived (the retrieval benchmarks do not depend on them). The hot index is then built
by :func:`brainmem_ros.memory.index.build_index`, the same path a store rebuild takes.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bench.corpus import Corpus, CorpusUnit
from brainmem_ros.memory.brainmem import DB_NAME, INDEX_NAME
from brainmem_ros.memory.config import LinkConfig, StoreConfig
from brainmem_ros.memory.graph import temporal_weight
from brainmem_ros.memory.index import build_index, save_index
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import Edge, EdgeKind, MemoryUnit


@dataclass(frozen=True)
class BuildReport:
    """What a bulk build produced and how long its parts took."""

    units: int
    edges: int
    insert_s: float
    index_s: float
    index_kind: str
    db_bytes: int
    index_bytes: int


class _Linker:
    """In-memory candidate lookups equivalent to link_candidates' index queries."""

    def __init__(self, config: LinkConfig) -> None:
        self.config = config
        self._episode: dict[str, deque[tuple[int, float]]] = {}
        self._entity: dict[str, deque[int]] = {}
        self._keys: dict[int, frozenset[str]] = {}
        self._sentence: dict[int, deque[tuple[int, npt.NDArray[np.float32]]]] = {}

    def link(self, uid: int, unit: CorpusUnit, vec: npt.NDArray[np.float32]) -> list[Edge]:
        cfg = self.config
        best: dict[tuple[int, EdgeKind], float] = {}

        def offer(other: int, kind: EdgeKind, weight: float) -> None:
            if other != uid and weight > best.get((other, kind), 0.0):
                best[(other, kind)] = weight

        window = cfg.temporal_window_s
        recent = self._episode.setdefault(unit.episode_id, deque(maxlen=max(1, cfg.temporal_links)))
        for lag, (other, stamp) in enumerate(reversed(recent), start=1):
            if unit.stamp - stamp <= window:
                offer(other, EdgeKind.TEMPORAL, temporal_weight(unit.stamp - stamp, lag, cfg))
        recent.append((uid, unit.stamp))

        keys = frozenset(e.key for e in unit.entities if e.key)
        for key in keys:
            ids = self._entity.setdefault(key, deque(maxlen=cfg.entity_links))
            for other in ids:
                other_keys = self._keys.get(other, frozenset())
                shared = keys & other_keys
                if shared:
                    offer(other, EdgeKind.ENTITY, max(0.25, len(shared) / len(keys | other_keys)))
            ids.append(uid)
        self._keys[uid] = keys

        similar = self._sentence.setdefault(unit.sentence, deque(maxlen=max(1, cfg.similar_links)))
        for other, other_vec in similar:
            score = float(vec @ other_vec)
            if score >= cfg.similar_threshold:
                offer(other, EdgeKind.SIMILAR, min(1.0, score))
        similar.append((uid, vec))

        ranked = sorted(best.items(), key=lambda item: -item[1])[:cfg.max_links]
        return [Edge(uid, other, kind, weight) for (other, kind), weight in ranked]

    def forget_old(self, below: int) -> None:
        # Entity deques only ever hold recent ids; drop the key sets nobody can reach.
        for uid in [u for u in self._keys if u < below]:
            del self._keys[uid]


def build_store(path: Path, corpus: Corpus, n: int, *, batch: int = 5000,
                links: LinkConfig | None = None, log: bool = True) -> BuildReport:
    """Write corpus units ``0..n-1`` into a fresh store directory ``path``."""
    path.mkdir(parents=True, exist_ok=True)
    cfg = links or LinkConfig()
    store = SqliteStore(path / DB_NAME, config=StoreConfig(synchronous='NORMAL'))
    linker = _Linker(cfg)
    t0 = time.perf_counter()
    edges_total = 0
    done = 0
    try:
        if store.count():
            msg = f'{path} is not empty'
            raise ValueError(msg)
        pending: list[tuple[CorpusUnit, npt.NDArray[np.float32]]] = []
        for item in corpus.units(0, n):
            pending.append(item)
            if len(pending) == batch:
                edges_total += _write(store, linker, pending)
                done += len(pending)
                pending = []
                linker.forget_old(done - 200 * batch)
                if log and done % (batch * 20) == 0:
                    rate = done / (time.perf_counter() - t0)
                    print(f'  bulk: {done} units, {edges_total} edges, {rate:.0f} units/s', flush=True)
        if pending:
            edges_total += _write(store, linker, pending)
        # A robot that stored these one by one would have reflected along the way.
        store.set_meta('last_reflection_id', str(store.max_id()))
        generation = store.bump_generation()
        insert_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        index = build_index(corpus.dim, lambda: store.iter_vectors(marginalized=False))
        save_index(index, path / INDEX_NAME, generation=generation, max_id=store.max_id())
        index_s = time.perf_counter() - t1
    finally:
        store.close()
    return BuildReport(units=n, edges=edges_total, insert_s=insert_s, index_s=index_s,
                       index_kind=index.kind, db_bytes=(path / DB_NAME).stat().st_size,
                       index_bytes=(path / INDEX_NAME).stat().st_size)


def _write(store: SqliteStore, linker: _Linker,
           items: list[tuple[CorpusUnit, npt.NDArray[np.float32]]]) -> int:
    edges: list[Edge] = []
    with store.atomic():
        for unit, vec in items:
            uid = store.insert_unit(_memory_unit(unit), vec)
            edges.extend(linker.link(uid, unit, vec))
        store.add_edges(edges)
    return len(edges)


def _memory_unit(u: CorpusUnit) -> MemoryUnit:
    return MemoryUnit(id=0, stamp=u.stamp, text=u.text, episode_id=u.episode_id, source='bench',
                      entities=u.entities, actions=u.actions, state_changes=u.state_changes,
                      outcome=u.outcome, valence=u.valence, importance=u.importance,
                      last_access=u.stamp, pose=u.pose, valid_from=u.stamp)
