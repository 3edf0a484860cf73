"""Open a store in a fresh process and report open time and memory (one JSON line).

``python -m bench.probe STORE_DIR [--queries N]``: a clean process is the only
honest way to measure RSS per unit and the time to open a store; the parent
benchmark runs this and parses the line it prints.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.common import load_embedder, rss_bytes
from bench.corpus import queries
from brainmem_ros.memory import BrainMem


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser()
    parser.add_argument('store', type=Path)
    parser.add_argument('--queries', type=int, default=50)
    args = parser.parse_args()
    rss_start = rss_bytes()
    t0 = time.perf_counter()
    embedder = load_embedder()
    model_s = time.perf_counter() - t0
    rss_model = rss_bytes()
    t1 = time.perf_counter()
    mem = BrainMem.open(args.store, embedder=embedder)
    open_s = time.perf_counter() - t1
    rss_open = rss_bytes()
    qs = queries(args.queries)
    t2 = time.perf_counter()
    mem.retrieve(qs[0].query, goal=qs[0].goal or None, state=qs[0].state or None, top_k=10)
    first_ms = (time.perf_counter() - t2) * 1e3
    for q in qs[1:]:
        mem.retrieve(q.query, goal=q.goal or None, state=q.state or None, top_k=10)
    # The in-memory graph and the vectors are read on threads of their own: RSS is
    # measured once both are in.
    graph_read_s = mem.adjacency.read_s if mem.adjacency is not None and mem.adjacency.wait_ready() \
        else None
    cache = mem.store_db.vector_cache
    vectors_held = len(cache) if cache is not None and cache.complete.wait(600) else 0
    rss_after = rss_bytes()
    stats = mem.stats()
    mem.close()
    print(json.dumps({
        'model_s': model_s, 'open_s': open_s, 'first_retrieve_ms': first_ms, 'graph_read_s': graph_read_s,
        'rss_start': rss_start, 'rss_model': rss_model, 'rss_open': rss_open, 'rss_after': rss_after,
        'vectors_held': vectors_held, 'units': stats.units, 'edges': stats.edges,
        'index_kind': stats.index_kind,
        'index_status': stats.index_status, 'store_bytes': stats.store_bytes}))


if __name__ == '__main__':
    main()
