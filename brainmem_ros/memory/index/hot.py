"""The hot index classes: exact (flat) and inverted-file FAISS indexes behind one protocol."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import faiss
import numpy as np
import numpy.typing as npt

from brainmem_ros.errors import VectorIndexError

Batches = Iterable[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]


class VectorIndex(Protocol):
    """Inner-product search over unit vectors keyed by unit id."""

    @property
    def kind(self) -> str:
        """Human-readable description, e.g. ``flat-ip``."""
        ...

    def __len__(self) -> int: ...

    def add(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors under ``ids``."""
        ...

    def remove(self, ids: npt.NDArray[np.int64]) -> None:
        """Remove ``ids`` (absent ids are ignored)."""
        ...

    def search(self, queries: npt.NDArray[np.float32], k: int, *, effort: float = 1.0
               ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Top-k (scores, ids) per query row; missing slots have id -1.

        ``effort`` < 1 lets an approximate index scan less (IVF: that share of
        ``nprobe``) where near neighbours are enough; exact search ignores it.
        """
        ...

    def search_within(self, queries: npt.NDArray[np.float32], k: int, ids: npt.NDArray[np.int64]
                      ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Top-k (scores, ids) per query row among ``ids`` only (a filtered search)."""
        ...


@dataclass(frozen=True)
class IndexPolicy:
    """When to leave exact search, and how to size and calibrate the approximate index."""

    exact_below: int = 50_000
    """Exact search below this many vectors (a flat scan of 50k x 384 takes ~2 ms)."""
    target_recall: float = 0.97
    """nprobe grows until recall@10 against exact search reaches this (margin over 0.95)."""
    min_nlist: int = 64
    max_nlist: int = 8192
    train_per_list: int = 48
    """Training vectors per inverted list (FAISS warns below 39)."""
    max_train: int = 65_536
    """Cap on training vectors (the sample is held in memory while building)."""
    calibration_queries: int = 200
    min_nprobe: int = 4
    """Calibration starts here: 200 queries estimate recall only to a few percent."""
    max_nprobe: int = 256
    outgrow_factor: float = 4.0
    """An IVF index is rebuilt once its size calls for this many times more lists."""
    seed: int = 20240601

    def nlist_for(self, n: int) -> int:
        """Inverted lists for ``n`` vectors: the power of two nearest sqrt(n), clamped."""
        exponent = round(math.log2(max(1.0, math.sqrt(max(n, 1)))))
        return int(min(self.max_nlist, max(self.min_nlist, 2 ** exponent)))

    def kind_for(self, n: int) -> str:
        """``flat`` or ``ivf``: what a rebuild of ``n`` vectors would produce."""
        return 'flat' if n < self.exact_below else 'ivf'


DEFAULT_POLICY = IndexPolicy()
SEARCH_THREADS = 1


# OpenMP's thread count is a per-thread setting (libgomp keeps it in each thread's own
# state; a thread that never set it uses one thread per core), so it is set by every
# thread that searches, the first time it does: the ingest's, the executor's service
# threads, enrichment. Left at two, a search woke a second OpenMP thread that then spun at
# the team barrier (measured in the node: 4.4 ms of CPU per observation in that thread).
_chosen = threading.local()


def search_threads(n: int = SEARCH_THREADS) -> None:
    """Set the OpenMP thread count of FAISS calls made by the calling thread."""
    _chosen.done = True
    faiss.omp_set_num_threads(max(1, n))


def _this_thread_chosen() -> None:
    if not getattr(_chosen, 'done', False):
        search_threads()


@contextmanager
def all_cores() -> Iterator[None]:
    """FAISS on every core for the calling thread inside the block (building an index), one
    thread after it."""
    _chosen.done = True
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    try:
        yield
    finally:
        search_threads()


class _FaissIndex:
    """A FAISS index behind a lock; subclasses say what it is."""

    def __init__(self, dim: int, index: faiss.Index) -> None:
        self.dim = dim
        self._index = index
        self._lock = threading.Lock()

    @property
    def kind(self) -> str:
        """Index description."""
        raise NotImplementedError

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors under ``ids``."""
        if len(ids) == 0:
            return
        _this_thread_chosen()
        vecs = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        with self._lock:
            self._index.add_with_ids(vecs, np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: npt.NDArray[np.int64]) -> None:
        """Remove ``ids``."""
        if len(ids) == 0:
            return
        with self._lock:
            self._index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))  # type: ignore[arg-type]

    def search(self, queries: npt.NDArray[np.float32], k: int, *, effort: float = 1.0
               ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Top-k (scores, ids) per query (``effort``: see :class:`VectorIndex`)."""
        _this_thread_chosen()
        q = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        params = self._search_params(effort)
        with self._lock:
            k = max(1, min(k, max(1, int(self._index.ntotal))))
            if params is None:
                scores, ids = self._index.search(q, k)
            else:
                scores, ids = self._index.search(q, k, params=params)
        return scores, ids

    def search_within(self, queries: npt.NDArray[np.float32], k: int, ids: npt.NDArray[np.int64]
                      ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Top-k (scores, ids) per query among ``ids`` only: FAISS skips every other vector."""
        _this_thread_chosen()
        q = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        selector = faiss.IDSelectorBatch(np.ascontiguousarray(ids, dtype=np.int64))
        params = self._selector_params(selector)
        with self._lock:
            k = max(1, min(k, len(ids), max(1, int(self._index.ntotal))))
            scores, found = self._index.search(q, k, params=params)
        return scores, found

    def _selector_params(self, selector: faiss.IDSelector) -> faiss.SearchParameters:
        params = faiss.SearchParameters()
        params.sel = selector
        return params

    def _search_params(self, effort: float) -> faiss.SearchParameters | None:
        del effort  # exact search has nothing to scale
        return None

    def to_bytes(self) -> bytes:
        """Serialized FAISS index (FAISS's own format, never pickle)."""
        with self._lock:
            return bytes(serialized(self._index))

    def copy(self) -> faiss.Index:
        """A copy of the FAISS index, to serialize (:func:`serialized`) without holding any lock.

        Copying is about ten times faster than serializing: 0.24 s against 2.7 s for the
        1M-unit IVF-SQ8 bench index, 26 against 247 ms at 100k (16 against 33 ms for a
        flat 10k), and a save takes it under the memory's lock.
        """
        with self._lock:
            return faiss.clone_index(self._index)


def serialized(index: faiss.Index) -> npt.NDArray[np.uint8]:
    """``index`` in FAISS's own format (never pickle), as the array FAISS returns (no copy)."""
    data: npt.NDArray[np.uint8] = faiss.serialize_index(index)
    return data


class FlatIndex(_FaissIndex):
    """Exact inner-product search (FAISS ``IndexIDMap2(IndexFlatIP)``), thread-safe."""

    def __init__(self, dim: int, index: faiss.Index | None = None) -> None:
        super().__init__(dim, index if index is not None else faiss.IndexIDMap2(faiss.IndexFlatIP(dim)))

    @property
    def kind(self) -> str:
        """Index description."""
        return 'flat-ip'

    @classmethod
    def from_bytes(cls, dim: int, data: bytes) -> FlatIndex:
        """Load an index written by :meth:`to_bytes`."""
        index = _deserialize(dim, data)
        if not isinstance(index, faiss.IndexIDMap2):
            msg = f'vector index is a {type(index).__name__}, not an exact flat index'
            raise VectorIndexError(msg)
        return cls(dim, index)


class IvfIndex(_FaissIndex):
    """Approximate inner-product search: inverted lists of 8-bit quantized vectors, thread-safe.

    Build one with :func:`build_index`; ``nprobe`` (lists scanned per query) travels
    with the serialized index.
    """

    def __init__(self, dim: int, index: faiss.IndexIVF) -> None:
        super().__init__(dim, index)
        self._ivf = index

    @property
    def kind(self) -> str:
        """Index description."""
        return f'ivf{self._ivf.nlist}-sq8-ip/nprobe{self._ivf.nprobe}'

    @property
    def nlist(self) -> int:
        """Number of inverted lists."""
        return int(self._ivf.nlist)

    @property
    def nprobe(self) -> int:
        """Lists scanned per query."""
        return int(self._ivf.nprobe)

    @nprobe.setter
    def nprobe(self, value: int) -> None:
        with self._lock:
            self._ivf.nprobe = int(max(1, min(value, self._ivf.nlist)))

    def _selector_params(self, selector: faiss.IDSelector) -> faiss.SearchParameters:
        # A filter can leave few vectors in the probed lists: scan four times as many.
        params = faiss.SearchParametersIVF()
        params.sel = selector
        params.nprobe = min(self._ivf.nlist, 4 * self._ivf.nprobe)
        return params

    def _search_params(self, effort: float) -> faiss.SearchParameters | None:
        if effort >= 1.0:
            return None
        params = faiss.SearchParametersIVF()
        params.nprobe = max(1, round(self._ivf.nprobe * max(0.0, effort)))
        return params

    @classmethod
    def trained(cls, dim: int, sample: npt.NDArray[np.float32], nlist: int, *, seed: int) -> IvfIndex:
        """An empty index whose lists and quantizer are trained on ``sample``."""
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = seed
        index.cp.niter = 12
        # Keep FAISS from subsampling again: the sample is already the right size.
        index.cp.max_points_per_centroid = max(1, (len(sample) + nlist - 1) // nlist)
        index.train(np.ascontiguousarray(sample, dtype=np.float32))
        return cls(dim, index)

    @classmethod
    def from_bytes(cls, dim: int, data: bytes) -> IvfIndex:
        """Load an index written by :meth:`to_bytes`."""
        index = _deserialize(dim, data)
        if not isinstance(index, faiss.IndexIVF):
            msg = f'vector index is a {type(index).__name__}, not an inverted-file index'
            raise VectorIndexError(msg)
        return cls(dim, index)


HotIndex = FlatIndex | IvfIndex


def _deserialize(dim: int, data: bytes) -> faiss.Index:
    index = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))
    if index.d != dim:
        msg = f'vector index has dimension {index.d}, the encoder gives {dim}'
        raise VectorIndexError(msg)
    return index


def index_from_bytes(dim: int, data: bytes) -> HotIndex:
    """Either kind of index from its serialized bytes."""
    index = _deserialize(dim, data)
    if isinstance(index, faiss.IndexIVF):
        return IvfIndex(dim, index)
    if isinstance(index, faiss.IndexIDMap2):
        return FlatIndex(dim, index)
    msg = f'vector index is a {type(index).__name__}, which brainmem does not use'
    raise VectorIndexError(msg)


# -- building --------------------------------------------------------------------------
