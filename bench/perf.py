"""Scaling benchmarks at 10k / 100k / 1M units: open, memory, Retrieve, Store, consolidation.

``python -m bench.perf [--sizes 10000 100000 1000000] [--skip-ros] [--repeats N]`` records into the
results file (see :mod:`bench.common`); :mod:`bench.report` renders docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import (
    REPO,
    bench_dir,
    build_info,
    copy_store,
    cpu_summary_ms,
    ensure_store,
    load_average,
    load_embedder,
    record,
    summary_ms,
    table,
)
from bench.corpus import Corpus, CorpusUnit, queries
from bench.dbfile import file_rows
from bench.enrichment_latency import SlowLlm
from bench.node import call, node_and_client
from brainmem_ros.encoders.base import Embedder, Insight, Relation
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.types import EdgeKind, ObservationInput
from brainmem_ros.tuning import tune_interpreter

N_QUERIES = 200
N_WARM = 10
N_STORE = 300
N_ENRICH = 300
BATCH = 32


class StageTimer:
    """Wall time spent inside chosen methods of live objects (wrapped on the instance)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        # Lexical and entity recall run on a retriever thread while the query is embedded:
        # only the calling thread's stages add up to (part of) the Retrieve's wall time.
        self.on_caller = 0.0
        self._caller = threading.get_ident()

    def wrap(self, obj: Any, name: str, label: str) -> None:
        fn = getattr(obj, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.perf_counter() - t
                self.totals[label] += spent
                if threading.get_ident() == self._caller:
                    self.on_caller += spent

        setattr(obj, name, timed)


def instrument_retrieve(mem: BrainMem) -> StageTimer:
    """Time the parts of BrainMem.retrieve."""
    timer = StageTimer()
    timer.wrap(mem.retriever.embedder, 'embed', 'embed query (ONNX)')
    if hasattr(mem.retriever.embedder, 'embed_query'):
        timer.wrap(mem.retriever.embedder, 'embed_query', 'embed query (ONNX)')
    timer.wrap(mem.index, 'search', 'vector search (FAISS)')
    timer.wrap(mem.store_db, 'fts_window', 'lexical recall (FTS5/BM25)')
    timer.wrap(mem.store_db, 'term_document_counts', 'lexical recall (FTS5/BM25)')
    timer.wrap(mem.store_db, 'entity_document_counts', 'entity recall (SQLite)')
    timer.wrap(mem.store_db, 'unit_heads', 'filter and rank columns (SQLite)')
    timer.wrap(mem.store_db, 'units_with_entities', 'entity recall (SQLite)')
    timer.wrap(mem.store_db, 'edges_of', 'activation: edges (SQLite, per unit)')
    timer.wrap(mem.store_db, 'get_units', 'load units (SQLite + JSON)')
    timer.wrap(mem.store_db, 'vectors', 'load vectors (SQLite)')
    timer.wrap(mem.store_db, 'touch', 'touch accessed units (write)')
    return timer


def probe(store: Path) -> dict[str, Any]:
    """Open time and RSS measured in a fresh process."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join([str(REPO), env.get('PYTHONPATH', '')])
    out = subprocess.run([sys.executable, '-m', 'bench.probe', str(store)], env=env, check=True,
                         capture_output=True, text=True, cwd=REPO)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def retrieve_inprocess(store: Path, embedder: Embedder, n: int, *, profile: bool) -> dict[str, Any]:
    """Retrieve latency in-process, with a per-stage breakdown (and a cProfile listing)."""
    qs = queries(N_QUERIES + N_WARM)
    with BrainMem.open(store, embedder=embedder) as mem:
        _wait_for_graph(mem)
        tune_interpreter()  # what the node does at configure
        for q in qs[:N_WARM]:
            mem.retrieve(q.query, goal=q.goal or None, state=q.state or None, top_k=10)
        timer = instrument_retrieve(mem)
        lat: list[float] = []
        cpu: list[float] = []
        load = load_average()
        for q in qs[N_WARM:]:
            t, c = time.perf_counter(), time.thread_time()
            mem.retrieve(q.query, goal=q.goal or None, state=q.state or None, top_k=10)
            lat.append(time.perf_counter() - t)
            cpu.append(time.thread_time() - c)
        total = sum(lat)
        stages = {k: v / len(lat) * 1e3 for k, v in timer.totals.items()}
        rest = total - timer.on_caller
        stages['rest: fusion, spreading, rerank (Python)'] = rest / len(lat) * 1e3
        listing = ''
        if profile:
            prof = cProfile.Profile()
            prof.enable()
            for q in qs[N_WARM:N_WARM + 50]:
                mem.retrieve(q.query, goal=q.goal or None, state=q.state or None, top_k=10)
            prof.disable()
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats('tottime').print_stats(15)
            listing = _trim_profile(buf.getvalue())
        kind = mem.index.kind
    return {**summary_ms(lat), **cpu_summary_ms(cpu), 'stages_ms': stages, 'profile': listing,
            'index_kind': kind, 'units': n, 'load': (load + load_average()) / 2}


def _wait_for_graph(mem: BrainMem) -> None:
    # The in-memory graph and the vector cache are read on threads of their own after
    # open (~25 s at 1M); until then SQLite answers. Measure the steady state.
    if mem.adjacency is not None and not mem.adjacency.wait_ready(600):
        msg = 'the in-memory graph was not read within 600 s'
        raise TimeoutError(msg)
    cache = mem.store_db.vector_cache
    if cache is not None and not cache.complete.wait(600):
        msg = 'the vectors were not read into memory within 600 s'
        raise TimeoutError(msg)


def _steady(details: dict[str, Any]) -> bool:
    """The node's Stats say its graph and vectors are in memory (or not kept there)."""
    return details['graph'] in ('in memory', 'off') and not details['vectors'].startswith('reading')


def _trim_profile(text: str) -> str:
    # Keep the table, drop machine paths (the listing is committed to docs/).
    lines = [ln for ln in text.splitlines() if ln.strip()]
    start = next((i for i, ln in enumerate(lines) if ln.strip().startswith('ncalls')), 0)
    return '\n'.join(_PATH_PREFIX.sub(r'\1/', ln) for ln in lines[start:])


_PATH_PREFIX = re.compile(r'\S*/(brainmem_ros|site-packages|python3\.\d+)/')


@contextmanager
def ros_node(store: Path) -> Iterator[Any]:
    """The real node on ``store`` as its own process, and a client node spinning here.

    Yields the client node once the node serves and its in-memory graph and vectors are read.
    """
    from brainmem_ros.srv import Stats

    params = store.parent / f'{store.name}-bench-params.yaml'
    try:
        with node_and_client(store, {'qos_depth': 1000}, params_file=params, client_name='bench_client',
                             log=store.parent / f'{store.name}-node.log') as (client, _):
            stats = _service(client, Stats, 'stats', timeout=120.0)
            end = time.monotonic() + 600
            while not _steady(json.loads(call(stats, Stats.Request()).details_json)):
                if time.monotonic() > end:
                    msg = 'the in-memory graph and vectors were not read within 600 s'
                    raise TimeoutError(msg)
                time.sleep(0.5)
            client.destroy_client(stats)
            yield client
    finally:
        params.unlink(missing_ok=True)


def _service(client_node: Any, srv_type: Any, name: str, *, timeout: float = 30.0) -> Any:
    """A client of the node's ``name`` service, once the service is there."""
    cli = client_node.create_client(srv_type, name)
    if not cli.wait_for_service(timeout_sec=timeout):
        msg = f'the {name} service did not come up within {timeout:.0f} s (the node log is next to the store)'
        raise TimeoutError(msg)
    return cli


def retrieve_ros(store: Path) -> dict[str, Any]:
    """Retrieve latency end to end through the ROS service (DDS round trip included)."""
    from brainmem_ros.srv import Retrieve, Stats

    qs = queries(N_QUERIES + N_WARM)
    with ros_node(store) as client:
        cli = _service(client, Retrieve, 'retrieve')
        lat: list[float] = []
        load = load_average()
        for i, q in enumerate(qs):
            req = Retrieve.Request(query=q.query, goal=q.goal, current_state=q.state, top_k=10)
            t = time.perf_counter()
            resp = call(cli, req)
            if i >= N_WARM:
                lat.append(time.perf_counter() - t)
            if not resp.success:
                msg = f'retrieve failed: {resp.message}'
                raise RuntimeError(msg)
        client.destroy_client(cli)
        # The node's own time in the callback (Stats: service_ms), the warm-up calls included:
        # what of the round trip is the memory and what is DDS and the two executors.
        stats = _service(client, Stats, 'stats')
        inside = json.loads(call(stats, Stats.Request()).details_json)['service_ms']['retrieve']
        client.destroy_client(stats)
    return {**summary_ms(lat), 'node_p50': inside['p50_ms'], 'node_p99': inside['p99_ms'],
            'load': (load + load_average()) / 2}


def _new_units(corpus: Corpus, n: int, count: int) -> list[CorpusUnit]:
    return [u for u, _ in corpus.units(n, n + count)]


def store_inprocess(store: Path, embedder: Embedder, corpus: Corpus, n: int) -> dict[str, Any]:
    """Store throughput in-process: one observation after another, then ``store_many`` batches."""
    units = _new_units(corpus, n, 2 * N_STORE + N_WARM)
    with BrainMem.open(store, embedder=embedder) as mem:
        tune_interpreter()
        for u in units[:N_WARM]:
            mem.store(u.text, stamp=u.stamp, episode_id=u.episode_id, pose=u.pose)
        timer = StageTimer()
        timer.wrap(mem.embedder, 'embed', 'embed (ONNX)')
        timer.wrap(mem.index, 'search', 'vector search (dedup + similar links)')
        timer.wrap(mem, 'reflect', 'reflection check')
        lat: list[float] = []
        cpu: list[float] = []
        load = load_average()
        t0 = time.perf_counter()
        for u in units[N_WARM:N_WARM + N_STORE]:
            t, c = time.perf_counter(), time.thread_time()
            mem.store(u.text, stamp=u.stamp, episode_id=u.episode_id, pose=u.pose)
            lat.append(time.perf_counter() - t)
            cpu.append(time.thread_time() - c)
        elapsed = time.perf_counter() - t0
        stages = {k: v / len(lat) * 1e3 for k, v in timer.totals.items()}
        batched = units[N_WARM + N_STORE:]
        t0, c0 = time.perf_counter(), time.thread_time()
        for start in range(0, len(batched), BATCH):
            mem.store_many([ObservationInput(u.text, stamp=u.stamp, episode_id=u.episode_id, pose=u.pose)
                            for u in batched[start:start + BATCH]])
        batch_s, batch_cpu = time.perf_counter() - t0, time.thread_time() - c0
    return {**summary_ms(lat), **cpu_summary_ms(cpu), 'per_s': len(lat) / elapsed,
            'cpu_per_s': len(cpu) / sum(cpu), 'stages_ms': stages, 'load': (load + load_average()) / 2,
            'batched_per_s': len(batched) / batch_s, 'batched_cpu_per_s': len(batched) / batch_cpu}


def store_ros(store: Path, corpus: Corpus, n: int) -> dict[str, Any]:
    """Store through the service (call after call) and through the observation topic (a burst)."""
    from brainmem_ros.msg import MemoryEvent, Observation
    from brainmem_ros.srv import Store

    units = _new_units(corpus, n + N_STORE + N_WARM, 2 * N_STORE + N_WARM)

    def observation(u: CorpusUnit) -> Any:
        msg = Observation(text=u.text, episode_id=u.episode_id, source='bench', has_pose=True)
        msg.header.frame_id = 'map'
        msg.header.stamp.sec = int(u.stamp)
        msg.pose.position.x, msg.pose.position.y = u.pose.x, u.pose.y
        msg.pose.orientation.w = 1.0
        return msg

    with ros_node(store) as client:
        cli = _service(client, Store, 'store')
        lat: list[float] = []
        t0 = time.perf_counter()
        for i, u in enumerate(units[:N_STORE + N_WARM]):
            if i == N_WARM:
                t0 = time.perf_counter()
            t = time.perf_counter()
            resp = call(cli, Store.Request(observation=observation(u)))
            if i >= N_WARM:
                lat.append(time.perf_counter() - t)
            if not resp.success:
                msg = f'store failed: {resp.message}'
                raise RuntimeError(msg)
        service_s = time.perf_counter() - t0
        client.destroy_client(cli)

        seen = [0]
        all_seen = threading.Event()
        burst = units[N_STORE + N_WARM:]

        def on_event(msg: Any) -> None:
            # Reflection units are created along the way: count observations only.
            # One event per stored batch, naming every unit of it.
            if (msg.kind == 'created' and msg.detail != 'reflection') or msg.kind == 'merged':
                seen[0] += len(msg.ids)
                if seen[0] >= len(burst):
                    all_seen.set()

        sub = client.create_subscription(MemoryEvent, 'memory_events', on_event, 1000)
        pub = client.create_publisher(Observation, 'observations', 1000)
        end = time.monotonic() + 10
        while pub.get_subscription_count() == 0 and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(0.5)
        t1 = time.perf_counter()
        for u in burst:
            pub.publish(observation(u))
        ok = all_seen.wait(600)
        topic_s = time.perf_counter() - t1
        client.destroy_subscription(sub)
        client.destroy_publisher(pub)
    return {'service': {**summary_ms(lat), 'per_s': len(lat) / service_s},
            'topic': {'per_s': seen[0] / topic_s, 'count': seen[0], 'complete': ok}}


N_DURING = 200  # Retrieve / Store calls timed at least while cycles run, as many as Retrieve alone
DURING_S = 30.0  # ... and for at least this long (under load a cycle takes a step per 2.5 s)
MAX_CYCLES = 40


def _summary_max_ms(seconds: Sequence[float]) -> dict[str, float]:
    return {**summary_ms(seconds), 'max': max(seconds) * 1e3, 'load': os.getloadavg()[0]}


def _window_done(lat: Sequence[float], began: float) -> bool:
    """A timed window is over: ``N_DURING`` calls over at least ``DURING_S`` since ``began``."""
    return len(lat) >= N_DURING and time.perf_counter() - began >= DURING_S


def _during_cycles(mem: BrainMem, now: float, call: Callable[[int], None]) -> tuple[list[float], float, int]:
    """Time ``call`` back to back while daily cycles run on another thread.

    Cycles follow one another a simulated day apart until ``N_DURING`` calls were timed
    over at least ``DURING_S`` (or ``MAX_CYCLES`` ran); then the calls stop and the
    cycle under way finishes alone. Returns the latencies, the clock and the cycles.
    """
    lat: list[float] = []
    cycles = 0
    began = time.perf_counter()
    while not _window_done(lat, began) and cycles < MAX_CYCLES:
        now += 86400.0
        done = threading.Event()

        def cycle(at: float = now, finished: threading.Event = done) -> None:
            try:
                mem.consolidate(now=at)
            finally:
                finished.set()

        worker = threading.Thread(target=cycle, name='bench-consolidate')
        worker.start()
        while not done.is_set() and not _window_done(lat, began):
            t = time.perf_counter()
            call(len(lat))
            lat.append(time.perf_counter() - t)
        worker.join()
        cycles += 1
    return lat, now, cycles


def consolidation(store: Path, embedder: Embedder, corpus: Corpus, n: int, *, repeats: int = 1
                  ) -> dict[str, Any]:
    """A daily cycle; Retrieve and Store latency while cycles run; a cycle marginalizing 5%.

    Retrieve alone and then while cycles run is measured ``repeats`` times in turn (each
    pair a minute apart at most, so the load of the machine is nearly the same).
    """
    qs = queries(N_DURING + N_WARM)
    units = _new_units(corpus, n + 4 * N_STORE, N_DURING + MAX_CYCLES * 20)
    with BrainMem.open(store, embedder=embedder) as mem:
        _wait_for_graph(mem)
        tune_interpreter()
        last = float(file_rows(mem.store_db.path, 'SELECT MAX(stamp) FROM units')[0][0])
        mem.store_db.set_meta('last_consolidation', repr(last))
        t = time.perf_counter()
        daily = mem.consolidate(now=last + 86400.0)
        daily_s = time.perf_counter() - t
        now = last + 86400.0

        def retrieve(i: int) -> None:
            q = qs[N_WARM + i % N_DURING]
            mem.retrieve(q.query, goal=q.goal or None, state=q.state or None, top_k=10)

        def store_one(i: int) -> None:
            u = units[i % len(units)]
            mem.store(u.text, stamp=now, episode_id=u.episode_id, pose=u.pose)

        for q in qs[:N_WARM]:
            mem.retrieve(q.query, goal=q.goal or None, state=q.state or None, top_k=10)
        pairs: list[dict[str, Any]] = []
        for _ in range(repeats):
            # As many calls over as long as while cycles run: a longer window meets more
            # of the other jobs of a shared machine, and a p99 over 3 s is not one over 30.
            alone: list[float] = []
            began = time.perf_counter()
            while not _window_done(alone, began):
                t = time.perf_counter()
                retrieve(len(alone))
                alone.append(time.perf_counter() - t)
            during, now, r_cycles = _during_cycles(mem, now, retrieve)
            pairs.append({'alone': {**_summary_max_ms(alone), 'calls': len(alone)},
                          'during': {**_summary_max_ms(during), 'cycles': r_cycles, 'calls': len(during)}})
            print(f'[{n}] Retrieve alone p99 {pairs[-1]["alone"]["p99"]:.1f} ms, while cycles run '
                  f'p99 {pairs[-1]["during"]["p99"]:.1f} ms ({len(during)} calls)', flush=True)
        stored, now, s_cycles = _during_cycles(mem, now, store_one)
        with mem.store_db.atomic() as db:
            db.execute('UPDATE units SET strength = 0.05 WHERE id % 20 = 0 AND protected = 0')
        t = time.perf_counter()
        weak = mem.consolidate(now=now + 3600.0)
        weak_s = time.perf_counter() - t
        kind = mem.index.kind
        edge_scale = mem.store_db.edge_scale().scale
    return {'daily_s': daily_s, 'daily_marginalized': len(daily.marginalized),
            'daily_pruned': daily.pruned_edges, 'marginalize_s': weak_s,
            'marginalized': len(weak.marginalized), 'index_kind': kind,
            'retrieve_alone': pairs[0]['alone'], 'retrieve_during': pairs[0]['during'],
            'retrieve_pairs': pairs,
            'store_during': {**_summary_max_ms(stored), 'cycles': s_cycles, 'calls': len(stored)},
            'edge_scale': edge_scale}


class InstantReasoner:
    """Stand-in reasoner that answers at once: every pair is a precondition (confidence 0.9)."""

    def relate(self, first: str, second: str) -> Relation:
        del first, second
        return Relation(EdgeKind.PRECONDITION, 0.9)

    def reflect(self, texts: Sequence[str]) -> list[Insight]:
        del texts
        return []  # the deterministic summary takes over, as when a real LLM fails


def enrichment(store: Path, embedder: Embedder, corpus: Corpus, n: int) -> dict[str, Any]:
    """The enrichment worker's own cost at scale, with stand-in LLMs that answer at once.

    With a real LLM the throughput is the LLM's (seconds per unit, docs/enrichment.md);
    what the engine adds per unit (read it, ground and merge, supersede, pick relation
    candidates, write new edges, reflect) is what this measures against N.
    """
    units = _new_units(corpus, n + 3 * N_STORE, N_ENRICH)
    with BrainMem.open(store, embedder=embedder, llm_extractor=SlowLlm(0.0),
                       reasoner=InstantReasoner()) as mem:
        worker = mem.enrichment
        if worker is None:
            msg = 'no enrichment worker'
            raise RuntimeError(msg)
        mem.store_many([ObservationInput(u.text, stamp=u.stamp, episode_id=u.episode_id, pose=u.pose)
                        for u in units[:N_WARM]])
        worker.wait_idle(120)
        before = worker.processed
        t0 = time.perf_counter()
        for start in range(N_WARM, len(units), BATCH):
            mem.store_many([ObservationInput(u.text, stamp=u.stamp, episode_id=u.episode_id, pose=u.pose)
                            for u in units[start:start + BATCH]])
        stored_s = time.perf_counter() - t0
        drained = worker.wait_idle(600)
        elapsed = time.perf_counter() - t0
        done = worker.processed - before
    return {'enriched': done, 'seconds': elapsed, 'per_s': done / elapsed, 'store_s': stored_s,
            'drained': drained, 'relation_candidates': mem.config.encoder.relation_candidates}


def retrieve_runs(store: Path, embedder: Embedder, n: int, *, ros: bool, profile: bool,
                  repeats: int) -> None:
    """Retrieve latency ``repeats`` times, in-process and through the service in turn.

    A p99 over 200 queries on a shared machine moves by several milliseconds from one
    run to the next, so the targets are judged on every run, all of them recorded.
    """
    key = str(n)
    runs: list[dict[str, Any]] = []
    for i in range(repeats):
        r = retrieve_inprocess(store, embedder, n, profile=profile and i == 0)
        if i == 0:
            record('retrieve_inprocess', key, r)  # the stage table and the profile
        run: dict[str, Any] = {'inprocess': {k: r[k] for k in ('p50', 'p99', 'cpu_p50', 'load')}}
        print(f'[{n}] retrieve in-process p50 {r["p50"]:.1f} ms p99 {r["p99"]:.1f} ms', flush=True)
        if i == 0:
            print(table(['stage', 'ms/query'], [(k, f'{v:.1f}') for k, v in
                                                sorted(r['stages_ms'].items(), key=lambda kv: -kv[1])]))
        if ros:
            rr = retrieve_ros(store)
            record('retrieve_ros', key, rr)
            run['ros'] = rr
            print(f'[{n}] retrieve via ROS p50 {rr["p50"]:.1f} ms p99 {rr["p99"]:.1f} ms '
                  f'(in the node\'s callback p50 {rr["node_p50"]:.1f} p99 {rr["node_p99"]:.1f}, '
                  f'load average {rr["load"]:.2f})', flush=True)
        runs.append(run)
        record('retrieve_runs', key, {'runs': runs})


def run_size(corpus: Corpus, embedder: Embedder, n: int, *, ros: bool, profile: bool,
             parts: set[str], repeats: int = 1) -> None:
    """Every benchmark at one size; each result is recorded as soon as it exists."""
    store = ensure_store(corpus, n)
    key = str(n)
    record('build', key, build_info(n))
    if 'open' in parts:
        p = probe(store)
        record('open', key, p)
        print(f'[{n}] open {p["open_s"]:.2f} s, RSS {p["rss_after"] / 2**20:.0f} MB '
              f'({p["rss_after"] / n:.0f} B/unit), index {p["index_kind"]}', flush=True)
    if 'retrieve' in parts:
        retrieve_runs(store, embedder, n, ros=ros, profile=profile, repeats=repeats)
    if parts & {'store', 'enrich', 'consolidate'}:
        scratch = copy_store(n, 'write')
        try:
            if 'store' in parts:
                s = store_inprocess(scratch, embedder, corpus, n)
                record('store_inprocess', key, s)
                print(f'[{n}] store in-process {s["per_s"]:.0f}/s (p50 {s["p50"]:.1f} ms, '
                      f'p99 {s["p99"]:.1f} ms), store_many x{BATCH} {s["batched_per_s"]:.0f}/s', flush=True)
                if ros:
                    sr = store_ros(scratch, corpus, n)
                    record('store_ros', key, sr)
                    print(f'[{n}] store via service {sr["service"]["per_s"]:.0f}/s, '
                          f'via topic {sr["topic"]["per_s"]:.0f}/s', flush=True)
            if 'enrich' in parts:
                e = enrichment(scratch, embedder, corpus, n)
                record('enrich', key, e)
                print(f'[{n}] enrichment with instant stand-in LLMs {e["per_s"]:.0f} units/s '
                      f'({e["enriched"]} units)', flush=True)
            if 'consolidate' in parts:
                c = consolidation(scratch, embedder, corpus, n, repeats=repeats)
                record('consolidate', key, c)
                rd, sd, ra = c['retrieve_during'], c['store_during'], c['retrieve_alone']
                print(f'[{n}] consolidate daily {c["daily_s"]:.2f} s, with 5% marginalized '
                      f'{c["marginalize_s"]:.2f} s; during cycles Retrieve p50 {rd["p50"]:.1f} ms '
                      f'max {rd["max"]:.1f} ms (alone p50 {ra["p50"]:.1f} max {ra["max"]:.1f}), '
                      f'Store p50 {sd["p50"]:.1f} ms max {sd["max"]:.1f} ms', flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


ALL_PARTS = ('open', 'retrieve', 'store', 'enrich', 'consolidate')


def main(argv: list[str] | None = None) -> None:
    """Run the scaling benchmarks."""
    parser = argparse.ArgumentParser(prog='python -m bench.perf')
    parser.add_argument('--sizes', type=int, nargs='+', default=[10_000, 100_000, 1_000_000])
    parser.add_argument('--parts', nargs='+', default=list(ALL_PARTS), choices=ALL_PARTS)
    parser.add_argument('--skip-ros', action='store_true')
    parser.add_argument('--repeats', type=int, default=1,
                        help='Retrieve latency runs per size (each one recorded)')
    args = parser.parse_args(argv)
    # Our own DDS domain, this host only: never talk to another ROS graph.
    os.environ.setdefault('ROS_DOMAIN_ID', str(100 + os.getpid() % 100))
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    embedder = load_embedder()
    corpus = Corpus(embedder)
    print(f'bench data in {bench_dir()}', flush=True)
    for n in args.sizes:
        run_size(corpus, embedder, n, ros=not args.skip_ros, profile=n == max(args.sizes),
                 parts=set(args.parts), repeats=max(1, args.repeats))


Runner = Callable[[list[str] | None], None]

if __name__ == '__main__':
    main()
