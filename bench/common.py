"""Shared pieces of the performance benchmarks: paths, the encoder, stores, statistics."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.bulk import build_store
from bench.corpus import Corpus
from brainmem_ros.encoders.base import Embedder
from brainmem_ros.memory.brainmem import DB_NAME, INDEX_NAME
from brainmem_ros.memory.index import build_index, save_index
from brainmem_ros.memory.store import SqliteStore

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / 'docs'
CORPUS_VERSION = '1'
# Bump when index.py's choice or calibration changes, or its sidecar: stores keep their
# units, the index is rebuilt. 4: the sidecar records the last unit id (max_id).
INDEX_VERSION = '4'


def bench_dir() -> Path:
    """Where benchmark stores and raw results live (``$BRAINMEM_BENCH_DIR`` or the model cache's sibling)."""
    configured = os.environ.get('BRAINMEM_BENCH_DIR', '').strip()
    if configured:
        return Path(configured).expanduser()
    from brainmem_ros.encoders.models import default_model_dir

    return default_model_dir().parent / 'bench'


def load_embedder() -> Embedder:
    """The default ONNX encoder with the node's default settings, without its cache.

    Benchmark queries are all distinct, but they repeat across sizes in one process:
    a text cache would turn every later size's encoder time into a lookup.
    """
    from brainmem_ros.encoders.models import materialise_models
    from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder
    from brainmem_ros.memory.config import EncoderConfig

    paths = materialise_models(include_llm=False)
    cfg = EncoderConfig()
    embedder: Embedder = OnnxEmbedder(paths.embedder_model, paths.tokenizer, cache_size=0,
                                      threads=cfg.threads, batch_size=cfg.batch_size,
                                      parallel=cfg.parallel_calls, query_threads=cfg.query_threads)
    return embedder


def ensure_store(corpus: Corpus, n: int) -> Path:
    """The bulk-built store of ``n`` corpus units, built once and reused."""
    path = bench_dir() / 'stores' / f'n{n}'
    stamp = path / 'bench-build.json'
    info = json.loads(stamp.read_text()) if stamp.exists() else {}
    if info.get('version') == CORPUS_VERSION:
        if info.get('index_version') != INDEX_VERSION:
            print(f'rebuilding the index of {path} ...', flush=True)
            info.update(rebuild_index(path), index_version=INDEX_VERSION)
            stamp.write_text(json.dumps(info))
        return path
    shutil.rmtree(path, ignore_errors=True)
    print(f'building a {n}-unit store in {path} ...', flush=True)
    report = build_store(path, corpus, n)
    print(f'  {report}', flush=True)
    stamp.write_text(json.dumps({'version': CORPUS_VERSION, 'index_version': INDEX_VERSION,
                                 **report.__dict__}))
    return path


def rebuild_index(path: Path) -> dict[str, Any]:
    """Rebuild and save a store's hot index, as BrainMem does when the file is unusable."""
    store = SqliteStore(path / DB_NAME)
    try:
        generation = store.bump_generation()  # as every save of BrainMem does
        t = time.perf_counter()
        index = build_index(store_dim(store), lambda: store.iter_vectors(marginalized=False))
        save_index(index, path / INDEX_NAME, generation=generation, max_id=store.max_id())
        seconds = time.perf_counter() - t
    finally:
        store.close()
    return {'index_s': seconds, 'index_kind': index.kind, 'index_bytes': (path / INDEX_NAME).stat().st_size}


def store_dim(store: SqliteStore) -> int:
    """Dimension of the stored vectors."""
    for _ids, vecs in store.iter_vectors(marginalized=False, batch=1):
        return int(vecs.shape[1])
    msg = f'{store.path} holds no vectors'
    raise ValueError(msg)


def build_info(n: int) -> dict[str, Any]:
    """What :func:`ensure_store` recorded about building the ``n``-unit store."""
    stamp = bench_dir() / 'stores' / f'n{n}' / 'bench-build.json'
    info: dict[str, Any] = json.loads(stamp.read_text())
    return info


def copy_store(n: int, name: str) -> Path:
    """A scratch copy of the ``n``-unit store (for benchmarks that change it)."""
    src = bench_dir() / 'stores' / f'n{n}'
    dst = bench_dir() / 'scratch' / f'{name}-n{n}'
    shutil.rmtree(dst, ignore_errors=True)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst)
    return dst


def pct(values: Sequence[float], q: float) -> float:
    """Percentile ``q`` of ``values`` (linear interpolation)."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    """p50 / p99 / mean in milliseconds."""
    return {'p50': pct(seconds, 50) * 1e3, 'p99': pct(seconds, 99) * 1e3,
            'mean': float(np.mean(seconds)) * 1e3, 'n': float(len(seconds))}


def cpu_summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    """p50 / p99 of per-call thread CPU time, in milliseconds.

    On a shared machine wall time includes waiting for a core; the CPU time the call
    itself used is what it would take on an idle one (minus I/O waits).
    """
    return {'cpu_p50': pct(seconds, 50) * 1e3, 'cpu_p99': pct(seconds, 99) * 1e3}


def load_average() -> float:
    """1-minute load average of the machine."""
    return float(Path('/proc/loadavg').read_text().split()[0])


def cpu_name() -> str:
    """The CPU's model name and core count: the encoder's speed and its vectors depend on it."""
    import platform
    model = platform.processor() or platform.machine()
    cpuinfo = Path('/proc/cpuinfo')
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    return f'{model}, {os.cpu_count()} cores'


def rss_bytes() -> int:
    """Resident set size of this process."""
    for line in Path('/proc/self/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) * 1024
    return 0


def results_path() -> Path:
    """The raw results file every benchmark adds to; docs are rendered from it."""
    return bench_dir() / 'results.json'


def load_results() -> dict[str, Any]:
    """All recorded results."""
    path = results_path()
    data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    return data


def record(section: str, key: str, value: Any) -> None:
    """Record one result (``section`` → ``key`` → value) with the date it was measured."""
    data = load_results()
    data.setdefault(section, {})[key] = {**value, 'date': time.strftime('%Y-%m-%d')} \
        if isinstance(value, dict) else value
    path = results_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix('.tmp')
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    tmp.replace(path)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table."""
    lines = ['| ' + ' | '.join(headers) + ' |', '|' + '---|' * len(headers)]
    lines += ['| ' + ' | '.join(str(c) for c in row) + ' |' for row in rows]
    return '\n'.join(lines)
