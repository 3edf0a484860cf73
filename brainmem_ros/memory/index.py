"""The hot vector index: a derived, rebuildable copy of the active units' vectors.

SQLite is the source of truth. The index file records the store generation it
reflects and its own sha256; on open, any disagreement (a crash between commit
and save, a truncated or bit-flipped file, a deleted file) means "rebuild from
SQLite", never a wrong answer.

Small memories use exact search (:class:`FlatIndex`). Past
:attr:`IndexPolicy.exact_below` vectors, :func:`build_index` trains an inverted-file
index with 8-bit scalar quantization (:class:`IvfIndex`): a quarter of the memory
of exact search, and a scan of a few lists instead of every vector. Its ``nprobe``
is calibrated at build time against exact search on the data itself, so recall@10
stays above :attr:`IndexPolicy.target_recall` (on query-like mixtures of memories,
see :func:`calibration_queries`). Both support ``remove_ids``, which
marginalization needs (HNSW does not). A saved index that no longer suits its size
is reported by :func:`load_index` as outgrown, so the store rebuilds it on open.

FAISS's OpenMP pool is process-wide. Our searches are one to three queries,
which gain nothing from threads, and on a loaded 2-core computer waking the pool
costs 10-40 ms per search (measured: exact search of 10k vectors, one query,
p50 0.7 ms with one thread, 12-18 ms with two). So creating an index sets FAISS to
one thread (:func:`search_threads`); only :func:`build_index` uses all cores, while
it trains and fills a new index.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
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


_threads_chosen = threading.Event()


def search_threads(n: int = SEARCH_THREADS) -> None:
    """Set FAISS's (process-wide) OpenMP thread count used by searches."""
    _threads_chosen.set()
    faiss.omp_set_num_threads(max(1, n))


@contextmanager
def _all_cores() -> Iterator[None]:
    _threads_chosen.set()
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
        if not _threads_chosen.is_set():
            search_threads()

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
            return bytes(faiss.serialize_index(self._index))


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


def build_index(dim: int, batches: Callable[[], Batches], *,
                policy: IndexPolicy = DEFAULT_POLICY) -> HotIndex:
    """The index that suits the vectors ``batches()`` yields, filled with them.

    ``batches`` is called twice (e.g. ``lambda: store.iter_vectors(marginalized=False)``):
    a first pass counts the vectors and keeps a uniform random sample, a second adds
    them. Memory stays bounded by the sample, not by the number of vectors. Above
    ``policy.exact_below`` vectors the sample trains an :class:`IvfIndex` whose
    ``nprobe`` is then calibrated (:func:`calibrate_nprobe`).
    """
    with _all_cores():
        return _build(dim, batches, policy)


def _build(dim: int, batches: Callable[[], Batches], policy: IndexPolicy) -> HotIndex:
    count, sample = _count_and_sample(batches(), dim, policy)
    if policy.kind_for(count) == 'flat':
        flat = FlatIndex(dim)
        for ids, vecs in batches():
            flat.add(ids, vecs)
        return flat
    nlist = policy.nlist_for(count)
    train = sample[:min(policy.max_train, policy.train_per_list * nlist)]
    ivf = IvfIndex.trained(dim, train, nlist, seed=policy.seed)
    queries = calibration_queries(sample, policy.calibration_queries, np.random.default_rng(policy.seed))
    truth = _StreamingTopK(queries, 10)
    for ids, vecs in batches():
        ivf.add(ids, vecs)
        truth.update(ids, vecs)
    calibrate_nprobe(ivf, queries, truth.ids(), target=policy.target_recall,
                     min_nprobe=policy.min_nprobe, max_nprobe=policy.max_nprobe)
    return ivf


def calibration_queries(sample: npt.NDArray[np.float32], n: int, rng: np.random.Generator, *,
                        mix: int = 4) -> npt.NDArray[np.float32]:
    """Queries that behave like a planner's: the normalised sum of ``mix`` random memories.

    A question touches several memories and matches none closely (measured: planner
    questions have a best cosine of about 0.7 to the corpus). Memories themselves are
    far easier queries: on the benchmark corpus at 100k they reach recall@10 0.98 with 2
    lists probed, where planner questions need 16-32; sums of 4 memories need as many
    as the questions, slightly more, so calibrating on them is conservative.
    """
    picks = sum(sample[rng.integers(0, len(sample), n)] for _ in range(mix))
    q = np.asarray(picks, dtype=np.float32)
    q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    return np.ascontiguousarray(q)


def calibrate_nprobe(index: IvfIndex, queries: npt.NDArray[np.float32],
                     exact_ids: npt.NDArray[np.int64], *, target: float, max_nprobe: int,
                     min_nprobe: int = 1, plateau: float = 0.003) -> float:
    """Double ``nprobe`` from ``min_nprobe`` until recall@k against ``exact_ids`` reaches ``target``.

    8-bit codes cannot order near-identical memories exactly, so recall can level off
    below ``target`` (at 1M corpus units it stops at 0.96): once doubling gains less
    than ``plateau``, the smaller ``nprobe`` is kept, since probing more only costs time.
    Returns the recall reached.
    """
    k = exact_ids.shape[1]
    limit = min(max_nprobe, index.nlist)
    nprobe = max(1, min(min_nprobe, limit))
    previous, previous_nprobe = -1.0, nprobe
    while True:
        index.nprobe = nprobe
        _, got = index.search(queries, k)
        reached = recall_at_k(got, exact_ids)
        if reached - previous < plateau:
            index.nprobe = previous_nprobe
            return previous
        if reached >= target or nprobe >= limit:
            return reached
        previous, previous_nprobe = reached, nprobe
        nprobe = min(limit, nprobe * 2)


def recall_at_k(got: npt.NDArray[np.int64], exact: npt.NDArray[np.int64]) -> float:
    """Mean fraction of each row of ``exact`` (ignoring -1) found in the same row of ``got``."""
    hits = total = 0
    for g, e in zip(got, exact, strict=True):
        truth = {int(i) for i in e if i >= 0}
        hits += len(truth & {int(i) for i in g})
        total += len(truth)
    return hits / total if total else 1.0


def needs_rebuild(index: HotIndex, *, policy: IndexPolicy = DEFAULT_POLICY) -> str | None:
    """Why ``index`` no longer suits its size (rebuild it), or None when it does.

    Hysteresis keeps a store near a threshold from rebuilding on every open: a flat
    index is kept until it holds ``exact_below`` vectors, an IVF index until it shrinks
    to half of that or grows to need ``outgrow_factor`` times its lists.
    """
    n = len(index)
    if isinstance(index, FlatIndex):
        if n >= policy.exact_below:
            return f'exact index outgrown ({n} vectors, approximate from {policy.exact_below})'
        return None
    if n < policy.exact_below // 2:
        return f'approximate index holds only {n} vectors: exact search is cheaper'
    if policy.nlist_for(n) >= policy.outgrow_factor * index.nlist:
        return f'approximate index outgrown ({n} vectors in {index.nlist} lists)'
    return None


def _count_and_sample(batches: Batches, dim: int, policy: IndexPolicy
                      ) -> tuple[int, npt.NDArray[np.float32]]:
    # A uniform sample of input of unknown length, vectorised: every vector draws a
    # random key and the smallest keys win; any prefix of the result is uniform too.
    keep = policy.max_train
    rng = np.random.default_rng(policy.seed)
    keys = np.empty(0, dtype=np.float64)
    sample = np.empty((0, dim), dtype=np.float32)
    count = 0
    for _ids, batch in batches:
        vecs = np.asarray(batch, dtype=np.float32).reshape(-1, dim)
        count += len(vecs)
        keys = np.concatenate([keys, rng.random(len(vecs))])
        sample = np.concatenate([sample, vecs])
        if len(keys) > 2 * keep:
            best = np.argpartition(keys, keep)[:keep]
            keys, sample = keys[best], sample[best]
    order = np.argsort(keys)[:keep]
    return count, np.ascontiguousarray(sample[order])


class _StreamingTopK:
    """Exact top-k inner-product neighbours of fixed queries over streamed batches."""

    def __init__(self, queries: npt.NDArray[np.float32], k: int) -> None:
        self.queries = queries
        self.k = k
        self._scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        self._ids = np.full((len(queries), k), -1, dtype=np.int64)

    def update(self, ids: npt.NDArray[np.int64], vecs: npt.NDArray[np.float32]) -> None:
        if len(ids) == 0 or len(self.queries) == 0:
            return
        ids = np.asarray(ids, dtype=np.int64)
        sims = self.queries @ np.asarray(vecs, dtype=np.float32).reshape(len(ids), -1).T
        k = min(self.k, sims.shape[1])
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        scores = np.concatenate([self._scores, np.take_along_axis(sims, top, axis=1)], axis=1)
        cand = np.concatenate([self._ids, ids[top]], axis=1)
        order = np.argsort(-scores, axis=1, kind='stable')[:, :self.k]
        self._scores = np.take_along_axis(scores, order, axis=1)
        self._ids = np.take_along_axis(cand, order, axis=1)

    def ids(self) -> npt.NDArray[np.int64]:
        return self._ids


# -- files -----------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexFileMeta:
    """Sidecar of an index file: what it reflects and how to check it."""

    generation: int
    count: int
    dim: int
    kind: str
    sha256: str


def save_index(index: HotIndex, path: Path, *, generation: int) -> None:
    """Write index + sidecar atomically (temp file, fsync, rename, fsync dir)."""
    data = index.to_bytes()
    meta = IndexFileMeta(generation=generation, count=len(index), dim=index.dim, kind=index.kind,
                         sha256=hashlib.sha256(data).hexdigest())
    _atomic_write(path, data)
    _atomic_write(path.with_suffix(path.suffix + '.json'), json.dumps(meta.__dict__).encode())


def load_index(path: Path, *, dim: int, generation: int, policy: IndexPolicy = DEFAULT_POLICY
               ) -> tuple[HotIndex | None, str]:
    """The saved index if it is intact, reflects ``generation`` and suits its size; else (None, why)."""
    meta_path = path.with_suffix(path.suffix + '.json')
    if not path.exists() or not meta_path.exists():
        return None, 'no saved vector index'
    try:
        raw = json.loads(meta_path.read_text())
        meta = IndexFileMeta(**raw)
    except (ValueError, TypeError) as exc:
        return None, f'vector index sidecar is unreadable ({exc})'
    if meta.generation != generation:
        return None, (f'vector index reflects store generation {meta.generation}, '
                      f'the store is at {generation}')
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != meta.sha256:
        return None, 'vector index file is damaged (checksum mismatch)'
    if meta.dim != dim:
        return None, f'vector index has dimension {meta.dim}, the encoder gives {dim}'
    try:
        index = index_from_bytes(dim, data)
    except (RuntimeError, VectorIndexError) as exc:
        return None, f'vector index file is unreadable ({exc})'
    if len(index) != meta.count:
        return None, 'vector index holds a different number of vectors than recorded'
    why = needs_rebuild(index, policy=policy)
    if why is not None:
        return None, why
    return index, 'loaded'


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + '.tmp')
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, 'wb') as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
