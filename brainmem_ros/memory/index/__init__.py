"""The hot vector index: a derived, rebuildable copy of the active units' vectors.

SQLite is the source of truth. The index file records the store generation and the
last unit id it reflects and its own sha256. On open, units stored after the save
(larger ids, same generation) are added to the loaded file from SQLite; any other
disagreement (a removal or restore after the save, a truncated or bit-flipped file,
a deleted file) means "rebuild from SQLite", never a wrong answer.

Small memories use exact search (:class:`FlatIndex`). Past
:attr:`IndexPolicy.exact_below` vectors, :func:`build_index` trains an inverted-file
index with 8-bit scalar quantization (:class:`IvfIndex`): a quarter of the memory
of exact search, and a scan of a few lists instead of every vector. Its ``nprobe``
is calibrated at build time against exact search on the data itself, so recall@10
stays above :attr:`IndexPolicy.target_recall` (on query-like mixtures of memories,
see :func:`calibration_queries`). Both support ``remove_ids``, which
marginalization needs (HNSW does not). A saved index that no longer suits its size
is reported by :func:`load_index` as outgrown, so the store rebuilds it on open.

FAISS's OpenMP thread count is set per thread. Our searches are one to three queries,
which gain nothing from threads, and on a loaded 2-core computer waking the pool
costs 10-40 ms per search (measured: exact search of 10k vectors, one query,
p50 0.7 ms with one thread, 12-18 ms with two). So every thread's first search sets
its own FAISS calls to one thread (:func:`search_threads`); only :func:`build_index`
uses all cores, on the thread that trains and fills a new index.
"""

from brainmem_ros.memory.index.build import (
    build_index,
    calibrate_nprobe,
    calibration_queries,
    needs_rebuild,
    recall_at_k,
)
from brainmem_ros.memory.index.files import (
    IndexFileMeta,
    IndexSnapshot,
    SavedIndex,
    load_index,
    save_index,
    snapshot_index,
    write_snapshot,
)
from brainmem_ros.memory.index.hot import (
    DEFAULT_POLICY,
    SEARCH_THREADS,
    Batches,
    FlatIndex,
    HotIndex,
    IndexPolicy,
    IvfIndex,
    VectorIndex,
    index_from_bytes,
    search_threads,
)

__all__ = [
    'DEFAULT_POLICY',
    'SEARCH_THREADS',
    'Batches',
    'FlatIndex',
    'HotIndex',
    'IndexFileMeta',
    'IndexPolicy',
    'IndexSnapshot',
    'IvfIndex',
    'SavedIndex',
    'VectorIndex',
    'build_index',
    'calibrate_nprobe',
    'calibration_queries',
    'index_from_bytes',
    'load_index',
    'needs_rebuild',
    'recall_at_k',
    'save_index',
    'search_threads',
    'snapshot_index',
    'write_snapshot',
]
