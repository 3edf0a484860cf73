"""Measure what ``synchronous=FULL`` costs: Store throughput and raw commit latency per setting.

Run from the repository root (figures go to docs/reliability.md)::

    PYTHONPATH=.:test .venv/bin/python -m reliability.durability
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from brainmem_ros.encoders.models import materialise_models
from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder
from brainmem_ros.memory import BrainMem, MemoryConfig

SETTINGS = ('FULL', 'NORMAL')


def commit_latency_ms(path: Path, synchronous: str, n: int = 300) -> list[float]:
    """Milliseconds per single-row transaction in WAL mode (what one Store commit pays)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute('PRAGMA journal_mode = WAL')
    db.execute(f'PRAGMA synchronous = {synchronous}')
    db.execute('CREATE TABLE t (x BLOB)')
    out = []
    for _ in range(n):
        start = time.perf_counter()
        db.execute('BEGIN IMMEDIATE')
        db.execute('INSERT INTO t VALUES (?)', (b'\0' * 2048,))
        db.execute('COMMIT')
        out.append((time.perf_counter() - start) * 1000)
    db.close()
    return out


def store_rate(path: Path, synchronous: str, embedder: OnnxEmbedder, n: int = 300) -> float:
    """Store calls per second through BrainMem (extraction, embedding, one transaction)."""
    config = MemoryConfig.from_mapping({'store.synchronous': synchronous})
    with BrainMem.open(path, config, embedder=embedder) as mem:
        mem.store('warm-up: the kettle is in the kitchen')
        start = time.perf_counter()
        for i in range(n):
            mem.store(f'Note {i}: the item {i * 7} is on shelf {i % 13} in room {i % 5}')
        return n / (time.perf_counter() - start)


def main() -> int:
    paths = materialise_models(include_llm=False)
    embedder = OnnxEmbedder(paths.embedder_model, paths.tokenizer)
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
        for setting in SETTINGS:
            lat = sorted(commit_latency_ms(Path(tmp) / f'raw-{setting}.db', setting))
            rate = store_rate(Path(tmp) / f'mem-{setting}', setting, embedder)
            p50, p99 = statistics.median(lat), lat[int(len(lat) * 0.99) - 1]
            sys.stdout.write(f'synchronous={setting}: commit p50 {p50:.2f} ms, p99 {p99:.2f} ms; '
                             f'BrainMem.store {rate:.0f}/s\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
