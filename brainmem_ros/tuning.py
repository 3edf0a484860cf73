"""Process-wide CPython settings for a latency-bound memory (the node applies them)."""

from __future__ import annotations

import gc
import sys

from threadpoolctl import threadpool_limits


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

    The products of a query are small (a few hundred vectors); OpenBLAS splits them over
    its threads anyway, and waking them costs more than the product: a 70 x 384 Gram
    matrix took 4 ms on two threads of a busy 2-core machine and 0.06 ms on one. ONNX
    Runtime and FAISS keep their own thread settings.
    """
    sys.setswitchinterval(switch_ms / 1000.0)
    threadpool_limits(limits=1, user_api='blas')
    if gc_gen0 > 0:
        gc.freeze()
        _, gen1, gen2 = gc.get_threshold()
        gc.set_threshold(gc_gen0, gen1, gen2)
