"""FAISS's OpenMP thread count is a per-thread setting: every thread that searches sets its own."""

from __future__ import annotations

import threading

import faiss
import numpy as np

from brainmem_ros.memory.index import SEARCH_THREADS, FlatIndex


def test_a_search_from_any_thread_runs_on_one_openmp_thread() -> None:
    index = FlatIndex(8)
    vectors = np.eye(8, dtype=np.float32)
    index.add(np.arange(8, dtype=np.int64), vectors)
    seen: list[int] = []

    def search() -> None:  # a thread that did not create the index (a service callback's)
        index.search(vectors[:1], 3)
        index.search_within(vectors[:1], 2, np.arange(4, dtype=np.int64))
        seen.append(faiss.omp_get_max_threads())

    thread = threading.Thread(target=search)
    thread.start()
    thread.join()
    assert seen == [SEARCH_THREADS]
