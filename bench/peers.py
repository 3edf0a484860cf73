"""Peers side by side, in one run, on the same vectors, queries and graph.

- plain FAISS exact top-k (``IndexFlatIP``): the floor for vector recall and the
  reference our approximate index is measured against;
- our hot index (exact or IVF-SQ8, as the store chose it): latency and recall@10;
- Chroma (``chromadb``, persistent client, precomputed embeddings, HNSW, inner
  product, no network): insert throughput, query latency, recall@10;
- networkx ``pagerank(personalization=seeds)`` vs our ``graph.spread`` from the same
  seeds over the same memory graph: time per query and overlap of the top results.

``python -m bench.peers [--sizes 10000 100000] [--chroma-max 100000] [--graph-max 100000]``
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from bench.common import bench_dir, ensure_store, load_embedder, record, summary_ms, table
from bench.corpus import Corpus, queries
from brainmem_ros.encoders.base import Embedder
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.brainmem import DB_NAME, INDEX_NAME
from brainmem_ros.memory.graph import edge_pairs, spread
from brainmem_ros.memory.index import index_from_bytes, recall_at_k, search_threads
from brainmem_ros.memory.retrieval import Query
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import Edge

N_QUERIES = 200
K = 10


def store_vectors(store: Path) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Every active vector of the store, in id order."""
    db = SqliteStore(store / DB_NAME)
    try:
        parts = list(db.iter_vectors(marginalized=False))
    finally:
        db.close()
    return (np.concatenate([p[0] for p in parts]),
            np.ascontiguousarray(np.concatenate([p[1] for p in parts])))


def timed_searches(search: Any, qv: npt.NDArray[np.float32]) -> tuple[list[float], npt.NDArray[np.int64]]:
    """One query at a time, as a planner asks: latencies and the ids found."""
    lat: list[float] = []
    found: list[npt.NDArray[np.int64]] = []
    for row in qv:
        t = time.perf_counter()
        found.append(search(row.reshape(1, -1)))
        lat.append(time.perf_counter() - t)
    return lat, np.stack(found)


def vector_peers(store: Path, qv: npt.NDArray[np.float32], n: int, *, chroma: bool) -> dict[str, Any]:
    """FAISS exact, our index, Chroma: latency and recall@10 on the same vectors and queries."""
    search_threads()
    ids, vecs = store_vectors(store)
    out: dict[str, Any] = {'units': int(len(ids))}

    t = time.perf_counter()
    exact = faiss.IndexIDMap2(faiss.IndexFlatIP(vecs.shape[1]))
    exact.add_with_ids(vecs, ids)
    build = time.perf_counter() - t
    lat, truth = timed_searches(lambda q: exact.search(q, K)[1][0], qv)
    out['faiss_exact'] = {**summary_ms(lat), 'build_s': build, 'recall': 1.0}

    ours = index_from_bytes(vecs.shape[1], (store / INDEX_NAME).read_bytes())
    lat, got = timed_searches(lambda q: ours.search(q, K)[1][0], qv)
    out['ours'] = {**summary_ms(lat), 'recall': recall_at_k(got, truth), 'kind': ours.kind}

    if chroma:
        out['chroma'] = chroma_peer(ids, vecs, qv, truth, n)
    return out


def chroma_peer(ids: npt.NDArray[np.int64], vecs: npt.NDArray[np.float32], qv: npt.NDArray[np.float32],
                truth: npt.NDArray[np.int64], n: int) -> dict[str, Any]:
    """Chroma with precomputed embeddings: insert everything, then query one at a time."""
    import chromadb
    from chromadb.config import Settings

    path = bench_dir() / 'scratch' / f'chroma-n{n}'
    shutil.rmtree(path, ignore_errors=True)
    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    try:
        col = client.create_collection('brainmem-bench', embedding_function=None,
                                       configuration={'hnsw': {'space': 'ip'}})
        batch = client.get_max_batch_size()
        str_ids = [str(i) for i in ids]
        t = time.perf_counter()
        for start in range(0, len(ids), batch):
            col.add(ids=str_ids[start:start + batch], embeddings=vecs[start:start + batch])
        insert_s = time.perf_counter() - t

        def query(q: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
            res = col.query(query_embeddings=q, n_results=K, include=[])
            return np.asarray([int(i) for i in res['ids'][0]] + [-1] * (K - len(res['ids'][0])))

        for q in qv[:10]:
            query(q.reshape(1, -1))
        lat, got = timed_searches(query, qv)
        return {**summary_ms(lat), 'insert_s': insert_s, 'insert_per_s': len(ids) / insert_s,
                'recall': recall_at_k(got, truth)}
    finally:
        del client
        shutil.rmtree(path, ignore_errors=True)


def graph_peers(store: Path, embedder: Embedder, n: int, n_queries: int = 30) -> dict[str, Any]:
    """networkx personalised PageRank vs our spreading activation, from the same seeds."""
    import networkx as nx

    with BrainMem.open(store, embedder=embedder) as mem:
        cfg = mem.config.retrieval
        t = time.perf_counter()
        graph: Any = nx.Graph()
        adjacency: dict[int, list[Edge]] = {}
        for edge in mem.store_db.all_edges():
            w = graph.get_edge_data(edge.src, edge.dst, {}).get('weight', 0.0)
            graph.add_edge(edge.src, edge.dst, weight=max(w, edge.weight))
            adjacency.setdefault(edge.src, []).append(edge)
            adjacency.setdefault(edge.dst, []).append(edge)
        for uid, edges in adjacency.items():
            adjacency[uid] = sorted(edges, key=lambda e: -e.weight)[:cfg.fanout]
        load_s = time.perf_counter() - t

        pairs = edge_pairs(adjacency)

        def in_memory(ids: Sequence[int]) -> Mapping[int, Sequence[tuple[int, float]]]:
            return {i: pairs.get(i, []) for i in ids}

        times: dict[str, list[float]] = {'spread_sqlite': [], 'spread_memory': [], 'pagerank': []}
        overlap_all: list[float] = []
        overlap_new: list[float] = []
        for bq in queries(n_queries, seed=17):
            seeds = _seeds(mem, Query(query=bq.query, goal=bq.goal, state=bq.state, top_k=K))
            kw: dict[str, Any] = {'hops': cfg.hops, 'decay': cfg.hop_decay,
                                  'threshold': cfg.activation_threshold, 'max_activated': cfg.max_activated}
            t = time.perf_counter()
            spread(seeds, lambda ids: edge_pairs(mem.store_db.edges_of(ids, fanout=cfg.fanout)), **kw)
            times['spread_sqlite'].append(time.perf_counter() - t)
            t = time.perf_counter()
            act = spread(seeds, in_memory, **kw)
            times['spread_memory'].append(time.perf_counter() - t)
            personal = {u: s for u, s in seeds.items() if u in graph and s > 0}
            t = time.perf_counter()
            pr = nx.pagerank(graph, alpha=0.85, personalization=personal or None, weight='weight', tol=1e-6)
            times['pagerank'].append(time.perf_counter() - t)
            ours = sorted(act, key=lambda u: -act[u].level)
            theirs = sorted(pr, key=lambda u: -pr[u])
            overlap_all.append(len(set(ours[:20]) & set(theirs[:20])) / 20)
            ours_new = [u for u in ours if u not in seeds][:20]
            theirs_new = [u for u in theirs if u not in seeds][:20]
            if ours_new:
                overlap_new.append(len(set(ours_new) & set(theirs_new)) / len(ours_new))
    return {'edges': graph.number_of_edges(), 'nodes': graph.number_of_nodes(), 'load_s': load_s,
            **{k: summary_ms(v) for k, v in times.items()},
            'overlap_top20': float(np.mean(overlap_all)),
            'overlap_top20_beyond_seeds': float(np.mean(overlap_new)) if overlap_new else 0.0}


def _seeds(mem: BrainMem, q: Query) -> dict[int, float]:
    # The seeds Retriever.run spreads from: each candidate's recall evidence.
    return mem.retriever.seeds(q)


def main(argv: list[str] | None = None) -> None:
    """Run the peer comparisons and record them."""
    parser = argparse.ArgumentParser(prog='python -m bench.peers')
    parser.add_argument('--sizes', type=int, nargs='+', default=[10_000, 100_000, 1_000_000])
    parser.add_argument('--chroma-max', type=int, default=100_000)
    parser.add_argument('--graph-max', type=int, default=100_000)
    args = parser.parse_args(argv)
    embedder = load_embedder()
    corpus = Corpus(embedder)
    qv = embedder.embed([q.query for q in queries(N_QUERIES)])
    for n in args.sizes:
        store = ensure_store(corpus, n)
        v = vector_peers(store, qv, n, chroma=n <= args.chroma_max)
        record('peers_vector', str(n), v)
        rows = [(name, f'{v[name]["p50"]:.2f}', f'{v[name]["p99"]:.2f}', f'{v[name]["recall"]:.3f}')
                for name in ('faiss_exact', 'ours', 'chroma') if name in v]
        print(f'[{n}] vector top-{K}, one query at a time')
        print(table(['system', 'p50 ms', 'p99 ms', 'recall@10'], rows), flush=True)
        if n <= args.graph_max:
            g = graph_peers(store, embedder, n)
            record('peers_graph', str(n), g)
            print(f'[{n}] spread (SQLite) p50 {g["spread_sqlite"]["p50"]:.1f} ms, spread (memory) '
                  f'{g["spread_memory"]["p50"]:.2f} ms, pagerank {g["pagerank"]["p50"]:.0f} ms, '
                  f'overlap@20 {g["overlap_top20"]:.2f} (beyond seeds {g["overlap_top20_beyond_seeds"]:.2f})',
                  flush=True)


if __name__ == '__main__':
    main()
