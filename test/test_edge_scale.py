"""Edge decay as one stored factor: a cycle writes the scale, not the edges.

Effective weight = stored weight x the edge scale (structural edges: as stored).
The store, the in-memory graph and Retrieve must agree on it bit for bit, through
decay, renormalisation and pruning.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from dbfile import file_rows
from test_adjacency import QUERIES, TEXTS, add_units, assert_same, random_edges

from brainmem_ros.memory import BrainMem, Edge, EdgeKind, MemoryConfig, dynamics
from brainmem_ros.memory import adjacency as adjacency_module
from brainmem_ros.memory.adjacency import Adjacency
from brainmem_ros.memory.retrieval import Query
from brainmem_ros.memory.store import STRUCTURAL_KINDS, EdgeScale, SqliteStore

T0 = 1_760_000_000.0
DAY = 86400.0


def effective(store: SqliteStore) -> dict[tuple[int, int, str], float]:
    return {(e.src, e.dst, e.kind.value): e.weight for e in store.all_edges()}


def stored(store: SqliteStore) -> dict[tuple[int, int, str], float]:
    return {(s, d, k): w for s, d, k, w in file_rows(store.path, 'SELECT src, dst, kind, weight FROM edges')}


def fill(mem: BrainMem) -> None:
    for i, text in enumerate(TEXTS):
        mem.store(text, stamp=T0 + 10 * i, episode_id=f'e{i // 5}')
    mem.reinforce([1, 3, 9], reward=1.0)


def test_a_cycle_decays_edges_without_writing_them(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory(clock=lambda: T0 + DAY)
    fill(mem)
    store = mem.store_db
    before_stored, before = stored(store), effective(store)
    assert before
    told: list[object] = []
    store.watch_edges(told.append)
    report = mem.consolidate(now=T0 + 1000)  # first cycle: units decay from their own stamp
    report = mem.consolidate(now=T0 + 1000 + 0.5 * DAY)
    assert report.pruned_edges == 0
    assert told == []  # no edge row was written: the in-memory graph had nothing to re-read
    assert stored(store) == before_stored
    factor = math.exp(-mem.config.dynamics.edge_decay_per_day * 0.5)
    assert store.edge_scale().scale == pytest.approx(factor)
    scale = store.edge_scale().scale
    assert effective(store) == {k: w if k[2] in STRUCTURAL_KINDS else w * scale for k, w in before.items()}
    assert mem.adjacency is not None
    assert_same(mem.adjacency, store)


def test_writes_under_a_scale_store_what_was_asked(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'memory.db')
    a, b, c = add_units(store, 3)
    store.set_edge_scale(EdgeScale(0.25))
    store.add_edges([Edge(a, b, EdgeKind.ENTITY, 0.5), Edge(a, c, EdgeKind.SUPERSEDES, 0.5)])
    assert effective(store) == {(a, b, 'entity'): 0.5, (a, c, 'supersedes'): 0.5}
    assert stored(store) == {(a, b, 'entity'): 2.0, (a, c, 'supersedes'): 0.5}
    store.strengthen_edge(a, b, EdgeKind.ENTITY, 0.5)  # 0.5 + 0.5 * (1 - 0.5)
    store.strengthen_edge(b, c, EdgeKind.CO_USE, 0.5)
    assert effective(store)[(a, b, 'entity')] == pytest.approx(0.75)
    assert effective(store)[(b, c, 'co_use')] == pytest.approx(0.5)
    # Structural edges rank by what they are, association ones by their scaled weight.
    assert [(e.dst, e.weight) for e in store.edges_of([a], fanout=5)[a]] == [(b, 0.75), (c, 0.5)]
    store.close()


@pytest.mark.parametrize('scan_rows', [250_000, 40])
def test_bulk_read_under_a_scale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scan_rows: int) -> None:
    monkeypatch.setattr(adjacency_module, '_SCAN_ROWS', scan_rows)
    rng = random.Random(11)
    store = SqliteStore(tmp_path / 'memory.db')
    ids = add_units(store, 200)
    store.add_edges(random_edges(rng, ids, 3000))
    store.set_edge_scale(EdgeScale(0.37))
    adj = Adjacency(store, fanout=5)
    assert_same(adj, store)
    for factor in (0.5, 0.2, 3.0):  # each change re-sorts rows in place
        store.set_edge_scale(EdgeScale(store.edge_scale().scale * factor))
        assert_same(adj, store)
    adj.close()
    store.close()


def test_renormalisation_keeps_every_weight(tmp_path: Path) -> None:
    rng = random.Random(3)
    store = SqliteStore(tmp_path / 'memory.db')
    ids = add_units(store, 60)
    store.add_edges(random_edges(rng, ids, 600))
    adj = Adjacency(store, fanout=4)
    store.set_edge_scale(EdgeScale(math.exp(-7.3)))
    assert_same(adj, store)
    before = effective(store)
    state = store.edge_scale()
    parts = 0
    while True:
        state = store.renormalise_edges(state.below + 7)
        parts += 1
        assert effective(store) == before  # bit for bit, also half-way
        if not state.below:
            break
    assert parts > 5 and state == EdgeScale()
    assert stored(store) == before
    assert_same(adj, store)
    adj.close()
    store.close()


def test_a_cycle_renormalises_in_steps(mem_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dynamics, 'RENORM_CHUNK', 2)
    mem: BrainMem = mem_factory(config=MemoryConfig.from_mapping({'dynamics.prune_below': 0.0}))
    fill(mem)
    store = mem.store_db
    mem.consolidate(now=T0 + 1000)
    before = effective(store)
    parts: list[EdgeScale] = []
    real = store.renormalise_edges

    def spy(hi: int) -> EdgeScale:
        parts.append(real(hi))
        return parts[-1]

    monkeypatch.setattr(store, 'renormalise_edges', spy)
    mem.consolidate(now=T0 + 1000 + 700 * DAY)  # 700 days at 1%/day: the scale falls under 1e-3
    assert len(parts) > 3 and store.edge_scale() == EdgeScale()
    # The sweep ran at the old scale: in the new unit that is 1, so sweeps go on.
    assert float(store.get_meta('edge_pruned_at_scale')) == pytest.approx(1.0)
    scale = math.exp(-mem.config.dynamics.edge_decay_per_day * 700)
    assert effective(store) == pytest.approx({k: w if k[2] in STRUCTURAL_KINDS else w * scale
                                              for k, w in before.items()})
    assert mem.adjacency is not None
    assert_same(mem.adjacency, store)


def test_pruning_is_bounded_per_range(mem_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dynamics, 'PRUNE_CHUNK', 4)
    mem: BrainMem = mem_factory()
    fill(mem)
    store = mem.store_db
    mem.consolidate(now=T0 + 1000)
    edges = store.edge_count()
    calls: list[tuple[int, int, int, int]] = []
    real = store.prune_edges

    def spy(lo: int, hi: int, *, below: float, limit: int) -> int:
        n = real(lo, hi, below=below, limit=limit)
        calls.append((lo, hi, limit, n))
        return n

    monkeypatch.setattr(store, 'prune_edges', spy)
    counts = {lo: store.association_edges(lo, lo + 4) for lo in range(1, store.max_edge_src() + 1, 4)}
    report = mem.consolidate(now=T0 + 10_000 * DAY)
    assert len(calls) == len(counts) > 3  # one step per range of source ids
    swept = pruned = 0
    for lo, hi, limit, n in calls:
        # At most a tenth of the association edges swept so far, at every step.
        swept += counts[lo]
        pruned += n
        assert hi - lo == 4 and n <= limit and pruned <= swept * dynamics.MAX_PRUNE_FRACTION
    assert 0 < report.pruned_edges == sum(n for *_, n in calls) <= edges // 10
    assert mem.adjacency is not None
    assert_same(mem.adjacency, store)


def test_pending_decay_of_an_older_store_is_applied(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    fill(mem)
    store = mem.store_db
    mem.consolidate(now=T0 + 1000)
    before = effective(store)
    scale = store.edge_scale().scale
    store.set_meta('edge_decay_pending', repr(0.995))
    mem.consolidate(now=T0 + 1000)  # no time passed: only the pending decay
    assert store.edge_scale().scale == pytest.approx(scale * 0.995)
    assert effective(store) == pytest.approx({k: w if k[2] in STRUCTURAL_KINDS else w * 0.995
                                              for k, w in before.items()})
    assert store.get_meta('edge_decay_pending') == ''


def test_retrieve_unchanged_by_a_pure_scale_change(mem_factory: Any, tmp_path: Path) -> None:
    on: BrainMem = mem_factory(tmp_path / 'on', clock=lambda: T0 + DAY)
    off: BrainMem = mem_factory(tmp_path / 'off', clock=lambda: T0 + DAY,
                                config=MemoryConfig.from_mapping({'links.in_memory_graph': False}))
    for mem in (on, off):
        fill(mem)
        mem.store_db.add_edges([Edge(2, 4, EdgeKind.SUPERSEDES, 0.6), Edge(9, 1, EdgeKind.EVIDENCE, 0.3)])

    def run(mem: BrainMem) -> list[Any]:
        return [mem.retriever.run(Query(query=t, top_k=8), now=T0 + DAY) for t in QUERIES]

    answers = run(on)
    assert answers == run(off)
    assert any(len(m.path) > 1 for r in answers for m in r)  # the graph shapes the answers
    for mem in (on, off):
        # Stored weights x 4, scale / 4: powers of two, so every product is exact.
        with mem.store_db.atomic() as db:
            db.execute("UPDATE edges SET weight = weight * 4 WHERE kind NOT IN ('supersedes', 'evidence')")
            mem.store_db.set_edge_scale(EdgeScale(0.25))
    assert run(on) == answers
    assert run(off) == answers
    assert on.adjacency is not None
    assert_same(on.adjacency, on.store_db)
