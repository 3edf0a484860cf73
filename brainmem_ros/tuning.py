"""Process-wide CPython settings for a latency-bound memory (the node applies them)."""

from __future__ import annotations

import gc
import sys


def tune_interpreter(*, switch_ms: float = 0.5, gc_gen0: int = 20000) -> None:
    """Process-wide CPython settings for a latency-bound node (both measured, see docs).

    Call it once the store is open (the node does, at configure; so do the benchmarks).

    The encoder, FAISS and SQLite release the GIL while they work; getting it back
    waits out the running Python thread's switch interval. With rclpy's executor
    threads always busy, Python's 5 ms default made every FAISS search of a Store
    cost ~5 ms instead of 0.3; 0.5 ms brings it near the lone figure.

    Full garbage collections walk every tracked object (rclpy's, the models', the
    store's) and showed as ~20 ms Retrieve outliers. Freezing what exists once the
    store is open takes it out of those walks, and a larger first generation makes
    collections rarer: Retrieve p99 at 100k went from 73 to 39 ms in-process.
    """
    sys.setswitchinterval(switch_ms / 1000.0)
    if gc_gen0 > 0:
        gc.freeze()
        _, gen1, gen2 = gc.get_threshold()
        gc.set_threshold(gc_gen0, gen1, gen2)
