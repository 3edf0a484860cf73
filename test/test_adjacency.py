"""The in-memory graph equals SQLite after every change, and Retrieve does not notice it.

``SqliteStore.edges_of`` orders equal weights by (src, dst, kind), so its answer is one
list and the adjacency must return exactly that list: no tolerance for ties is needed.
Every comparison asks twice: the first answer re-reads the rows a change made stale,
the second comes from the arrays alone.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from brainmem_ros.memory import BrainMem, Edge, EdgeKind, MemoryConfig, MemoryUnit
from brainmem_ros.memory import adjacency as adjacency_module
from brainmem_ros.memory.adjacency import Adjacency
from brainmem_ros.memory.adjacency_rows import STALE, Rows
from brainmem_ros.memory.graph import edge_pairs
from brainmem_ros.memory.retrieval import Query, Retriever
from brainmem_ros.memory.store import EdgeScale, SqliteStore

T0 = 1_760_000_000.0
DAY = 86400.0
# Few distinct weights: ties at each row's cut-off are the rule, not the exception.
WEIGHTS = (0.25, 0.5, 0.5, 0.8, 1.0)

TEXTS = (
    'I opened the fridge to get the milk',
    'The milk carton in the fridge is almost empty',
    'Anna put the red cup on the kitchen table',
    'The red cup is in the dishwasher now',
    'The charging dock is next to the sofa in the living room',
    'Bob asked me to bring the newspaper to the living room',
    'The kitchen door is open',
    'I closed the kitchen door because the cat was outside',
    'Anna likes her coffee with milk',
    'The dishwasher finished and the cups are clean',
    'The cat sleeps on the sofa in the afternoon',
    'Bob left his keys on the kitchen table',
    'I could not reach the top shelf of the fridge',
    'The newspaper is on the sofa',
    'Anna watered the plants in the living room',
    'The keys are in the drawer next to the door',
)

QUERIES = (
    'where is the milk?', 'what does Anna drink?', 'where are the keys?', 'where is the cat?',
    'what happened in the kitchen?', 'what is in the living room?',
)


def assert_same(adj: Adjacency, store: SqliteStore) -> None:
    """Every row (and ids around them) answers as SQLite does, re-read and from the arrays."""
    assert adj.wait_ready(timeout=60)
    ids = list(range(-1, max(adj.rows, store.max_id() + 1) + 2))
    expected = store.edges_of(ids, fanout=adj.fanout)
    # Spreading's pairs first: stale rows are still read from SQLite by this call.
    assert adj.neighbour_weights(ids) == edge_pairs(expected)
    assert adj.edges_of(ids) == expected
    assert adj.stale_rows == 0
    assert adj.edges_of(ids) == expected
    assert adj.neighbour_weights(ids) == edge_pairs(expected)


def add_units(store: SqliteStore, n: int) -> list[int]:
    vector = np.zeros(4, dtype=np.float32)
    with store.atomic():
        return [store.insert_unit(MemoryUnit(id=0, stamp=T0 + i, text=f'unit {i}', last_access=T0,
                                             valid_from=T0 + i), vector) for i in range(n)]


def random_edges(rng: random.Random, ids: Sequence[int], n: int) -> list[Edge]:
    return [Edge(rng.choice(ids), rng.choice(ids), rng.choice(list(EdgeKind)),
                 rng.choice(WEIGHTS) if rng.random() < 0.7 else round(rng.random(), 3))
            for _ in range(n)]


def graph_of(path: Path, *, seed: int, units: int, edges: int, fanout: int
             ) -> tuple[random.Random, SqliteStore, list[int], Adjacency]:
    """A store of ``units`` units and ``edges`` random edges, and its adjacency once read."""
    rng = random.Random(seed)
    store = SqliteStore(path / 'memory.db')
    ids = add_units(store, units)
    store.add_edges(random_edges(rng, ids, edges))
    adj = Adjacency(store, fanout=fanout)
    assert adj.wait_ready(timeout=60)
    return rng, store, ids, adj


# -- the store on its own ----------------------------------------------------------------


@pytest.mark.parametrize('scan_rows', [250_000, 40])
def test_bulk_read_equals_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scan_rows: int) -> None:
    # 40 edges per read: the rows of older units are merged across many chunks.
    monkeypatch.setattr(adjacency_module, '_SCAN_ROWS', scan_rows)
    rng = random.Random(7)
    store = SqliteStore(tmp_path / 'memory.db')
    ids = add_units(store, 300)
    store.add_edges(random_edges(rng, ids, 4000))
    for a in rng.sample(ids, 5):
        store.strengthen_edge(a, a, EdgeKind.CO_USE, 0.3)  # a self-loop is listed at both ends
    adj = Adjacency(store, fanout=5)
    assert adj.wait_ready(timeout=60)
    assert adj.rows > 300 and adj.stale_rows == 0
    assert adj.nbytes == adj.rows * (5 * 13 + 1)
    assert_same(adj, store)
    adj.close()
    store.close()


def test_rows_grow_with_new_units(tmp_path: Path) -> None:
    rng = random.Random(3)
    store = SqliteStore(tmp_path / 'memory.db')
    adj = Adjacency(store, fanout=4)
    first_rows = adj.rows
    ids: list[int] = []
    for _ in range(6):
        ids += add_units(store, 700)
        store.add_edges(random_edges(rng, ids, 1500))
        assert_same(adj, store)
    assert adj.rows > len(ids) > first_rows
    assert adj.rows < 2 * len(ids)  # geometric, not unbounded
    adj.close()
    store.close()


def test_the_bulk_read_leaves_room_for_a_quarter_more_units(tmp_path: Path) -> None:
    # Growing the arrays runs inside a Store, under the lock (0.5 s at 1M units as a
    # copy): with only 1024 spare rows, every start of a large store met it within its
    # first thousand Stores.
    rng, store, ids, adj = graph_of(tmp_path, seed=11, units=6000, edges=3000, fanout=4)
    rows = adj.rows
    assert rows >= 1.25 * max(ids)
    more = add_units(store, 1400)  # beyond 1024 new ids
    store.add_edges(random_edges(rng, ids[-50:] + more, 800))
    assert adj.rows == rows
    assert_same(adj, store)
    adj.close()
    store.close()


def test_growth_keeps_every_row(tmp_path: Path) -> None:
    # Enlarged in place when nothing else refers to an array, copied otherwise.
    rows = Rows(3, 10)
    rows.other[:] = np.arange(1, 31, dtype=np.int32).reshape(10, 3)
    rows.weight[:] = 0.5
    view = rows.code[:2]  # a reference to one array: that one is copied
    rows.grow(16)
    assert len(rows) == 16 and rows.code.shape == (16, 3) and view.shape == (2, 3)
    assert (rows.other[:10].ravel() == np.arange(1, 31)).all() and (rows.other[10:] == 0).all()
    assert (rows.weight[:10] == 0.5).all() and (rows.weight[10:] == 0).all()
    assert (rows.flags[:10] == 0).all() and (rows.flags[10:] == STALE).all()


def test_fanout_and_transactions(tmp_path: Path) -> None:
    _, store, ids, adj = graph_of(tmp_path, seed=5, units=80, edges=900, fanout=6)
    # Shallower: a prefix of the held rows; deeper than held: SQLite answers.
    for fanout in (1, 3, 6, 9, 40):
        assert adj.edges_of(ids, fanout=fanout) == store.edges_of(ids, fanout=fanout)
    # Inside a transaction the adjacency answers with the transaction's own writes ...
    a, b = ids[0], ids[1]
    with pytest.raises(RuntimeError), store.atomic() as db:
        store.add_edges([Edge(a, b, EdgeKind.CAUSES, 5.0)])
        db.execute('DELETE FROM edges WHERE src = ? OR dst = ?', (ids[2], ids[2]))
        assert adj.edges_of([a, b, ids[2]]) == store.edges_of([a, b, ids[2]], fanout=6)
        assert adj.edges_of([a])[a][0] == Edge(a, b, EdgeKind.CAUSES, 5.0)
        raise RuntimeError
    # ... and after the rollback, with none of them.
    assert_same(adj, store)
    assert all(e.weight < 5.0 for e in adj.edges_of([a])[a])
    adj.close()
    with store.reading() as db:  # TEMP triggers belong to the store's own connection
        assert db.execute("SELECT name FROM sqlite_temp_master WHERE type = 'trigger'").fetchall() == []
    assert adj.edges_of(ids) == store.edges_of(ids, fanout=6)  # closed: SQLite answers
    store.close()


def test_rows_it_cannot_hold_are_read_from_sqlite(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'memory.db')
    ids = add_units(store, 10)
    store.add_edges([Edge(ids[0], ids[1], EdgeKind.ENTITY, 0.5), Edge(ids[2], ids[3], EdgeKind.ENTITY, 0.5)])
    with store.atomic() as db:  # a kind written by a newer version
        db.execute("INSERT INTO edges(src, dst, kind, weight) VALUES (?, ?, 'mystery', 0.9)",
                   (ids[0], ids[4]))
        # Ids beyond int32 (never handed out by SQLite in practice) at either end.
        far = 2**31 + 5
        db.execute("INSERT INTO units(id, stamp, type, text, last_access, valid_from) "
                   "VALUES (?, 0, 'observation', 'far', 0, 0)", (far,))
        db.execute("INSERT INTO edges VALUES (?, ?, 'entity', 0.4), (?, ?, 'entity', 0.3)",
                   (ids[5], far, far, ids[6]))
    adj = Adjacency(store, fanout=4)
    assert adj.wait_ready(timeout=60)
    assert adj.stale_rows == 4  # both ends of the unknown edge, and the far unit's neighbours
    readable = [i for i in [*ids, far] if i not in (ids[0], ids[4])]
    assert adj.edges_of(readable) == store.edges_of(readable, fanout=4)
    assert adj.edges_of(readable) == store.edges_of(readable, fanout=4)
    assert adj.edges_of([far])[far] == [Edge(ids[5], far, EdgeKind.ENTITY, 0.4),
                                        Edge(far, ids[6], EdgeKind.ENTITY, 0.3)]
    with pytest.raises(ValueError, match='mystery'):
        store.edges_of([ids[0]], fanout=4)
    with pytest.raises(ValueError, match='mystery'):
        adj.edges_of([ids[0]])
    adj.close()
    store.close()


def test_changes_during_the_bulk_read_are_not_lost(tmp_path: Path) -> None:
    rng = random.Random(11)
    store = SqliteStore(tmp_path / 'memory.db')
    ids = add_units(store, 500)
    store.add_edges(random_edges(rng, ids, 5000))
    with store.lock:
        # The read runs on its own connection: it takes its snapshot and finishes (a
        # few ms here), then waits for the lock to install the rows. Changes committed
        # meanwhile are not in its snapshot.
        adj = Adjacency(store, fanout=4)
        time.sleep(0.5)
        assert not adj.ready
        store.add_edges(random_edges(rng, ids, 50))
        store.strengthen_edge(ids[0], ids[1], EdgeKind.CO_USE, 0.9)
        with store.atomic() as db:
            db.execute('DELETE FROM units WHERE id IN (?, ?)', (ids[2], ids[3]))
        # Lookups before the rows are in are SQLite's.
        assert adj.edges_of(ids[:50]) == store.edges_of(ids[:50], fanout=4)
    assert_same(adj, store)
    # A wholesale change starts a new read; meanwhile SQLite answers.
    with store.rewriting_edges() as db:
        db.execute('UPDATE edges SET weight = weight * 0.5')
    assert adj.edges_of(ids[:50]) == store.edges_of(ids[:50], fanout=4)
    assert_same(adj, store)
    adj.close()
    store.close()


# -- every way edges change, through the real memory ---------------------------------------


@pytest.mark.parametrize('seed', [1, 2])
def test_random_changes_never_leave_it_stale(mem_factory: Any, seed: int) -> None:
    rng = random.Random(seed)
    now = [T0]
    config = MemoryConfig.from_mapping({
        'retrieval.fanout': 4, 'dynamics.prune_below': 0.15, 'dynamics.edge_decay_per_day': 0.3,
        'dynamics.replay_count': 3})
    mem: BrainMem = mem_factory(config=config, clock=lambda: now[0])
    store = mem.store_db
    for i, text in enumerate(TEXTS):
        mem.store(text, stamp=T0 + 10 * i, episode_id=f'e{i // 6}')
    adj = mem.adjacency
    assert adj is not None and adj.fanout == 4
    assert_same(adj, store)

    def existing() -> list[int]:
        return store.all_ids()

    def add() -> None:
        store.add_edges(random_edges(rng, existing(), rng.randint(1, 30)))

    def strengthen() -> None:
        a, b = rng.sample(existing(), 2)
        store.strengthen_edge(a, b, rng.choice(list(EdgeKind)), rng.choice([0.1, 0.5, 0.9]))

    def reinforce() -> None:
        chosen = rng.sample(existing(), rng.randint(2, 5))
        mem.reinforce(chosen, reward=1.0)
        mem.reinforce(chosen[:3], reward=rng.choice([-1.0, -0.5, 0.5]))  # < 0: raw UPDATE of co-use edges

    def consolidate() -> None:
        now[0] += rng.uniform(0.5, 4.0) * DAY
        mem.consolidate(now=now[0])

    def delete() -> None:
        ids = existing()
        if len(ids) > 8:
            mem.forget(rng.sample(ids, rng.randint(1, 2)), mode='delete', confirm=True)

    def store_new() -> None:
        now[0] += 60
        mem.store(rng.choice(TEXTS) + f' (seen {rng.randint(1, 10**6)} times)', stamp=now[0],
                  episode_id='later')

    def reflect() -> None:
        mem.reflect(now=now[0], force=True)

    def rolled_back() -> None:
        a, b = rng.sample(existing(), 2)
        with pytest.raises(RuntimeError), store.atomic() as db:
            store.add_edges(random_edges(rng, existing(), 10))
            store.strengthen_edge(a, b, EdgeKind.CO_USE, 0.9)
            db.execute('DELETE FROM edges WHERE src = ? OR dst = ?', (b, b))
            db.execute('DELETE FROM units WHERE id = ?', (a,))
            raise RuntimeError

    def wholesale_rolled_back() -> None:
        # The triggers are off inside rewriting_edges: they must come back after a rollback.
        with pytest.raises(RuntimeError), store.atomic(), store.rewriting_edges() as db:
            db.execute('UPDATE edges SET weight = weight * 0.5')
            raise RuntimeError
        add()

    def raw_autocommit() -> None:
        # Outside any transaction: reported when the adjacency is next asked. No method of
        # the store writes this way; the store's own connection still can, so it is used here.
        a = rng.choice(existing())
        with store.lock:
            store._db.execute('UPDATE edges SET weight = ? WHERE src = ?', (rng.choice(WEIGHTS), a))

    def rescale() -> None:
        # A pure scale change: association edges move against structural ones.
        store.set_edge_scale(EdgeScale(store.edge_scale().scale * rng.choice([0.3, 0.5, 0.9, 1.6])))

    def renormalise() -> None:
        state = store.edge_scale()
        while True:
            state = store.renormalise_edges(state.below + rng.randint(1, 6))
            assert_same(adj, store)  # SQLite answers half-way, the arrays after
            if not state.below:
                break

    ops: list[Callable[[], None]] = [add, strengthen, reinforce, consolidate, delete, store_new, reflect,
                                     rolled_back, wholesale_rolled_back, raw_autocommit, rescale,
                                     renormalise]
    for op in ops + [rng.choice(ops) for _ in range(40)]:
        op()
        assert_same(adj, store)
    assert store.edge_count() > 0


# -- Retrieve ------------------------------------------------------------------------------


def test_retrieve_same_with_graph_in_memory_or_in_sqlite(mem_factory: Any, tmp_path: Path) -> None:
    now = [T0 + 1000]
    on: BrainMem = mem_factory(tmp_path / 'on', clock=lambda: now[0])
    off: BrainMem = mem_factory(tmp_path / 'off', clock=lambda: now[0],
                                config=MemoryConfig.from_mapping({'links.in_memory_graph': False}))
    assert on.adjacency is not None and off.adjacency is None
    multi_hop = 0

    def same() -> None:
        nonlocal multi_hop
        assert on.adjacency is not None
        assert_same(on.adjacency, on.store_db)
        sql_only = Retriever(on.store_db, on.index, on.embedder, on.config.retrieval)
        for text in QUERIES:
            q = Query(query=text, top_k=8)
            assert on.retriever.run(q, now=now[0]) == sql_only.run(q, now=now[0])
            got = [(r.unit.id, r.score, r.path) for r in on.retrieve(text, top_k=8)]
            assert got == [(r.unit.id, r.score, r.path) for r in off.retrieve(text, top_k=8)]
            multi_hop += sum(len(path) > 1 for _, _, path in got)

    for mem in (on, off):
        for i, text in enumerate(TEXTS):
            mem.store(text, stamp=T0 + 10 * i, episode_id=f'e{i // 5}')
    same()
    for mem in (on, off):
        mem.reinforce([1, 3, 9], reward=1.0)
        mem.reinforce([2, 4], reward=1.0)
        mem.reinforce([2, 4], reward=-1.0)
    same()
    now[0] += 20 * DAY
    for mem in (on, off):
        mem.consolidate(now=now[0])
        mem.forget([5, 12], mode='delete', confirm=True)
        mem.store('Anna moved the red cup to the living room', stamp=now[0], episode_id='e9')
    same()
    on.close()
    on = mem_factory(tmp_path / 'on', clock=lambda: now[0])  # read in bulk at open
    same()
    assert multi_hop  # the graph did shape the answers being compared
