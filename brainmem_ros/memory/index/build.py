"""Building a hot index from SQLite's vectors, and calibrating its ``nprobe``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from brainmem_ros.memory.index.hot import (
    DEFAULT_POLICY,
    Batches,
    FlatIndex,
    HotIndex,
    IndexPolicy,
    IvfIndex,
    all_cores,
)


def build_index(dim: int, batches: Callable[[], Batches], *,
                policy: IndexPolicy = DEFAULT_POLICY) -> HotIndex:
    """The index that suits the vectors ``batches()`` yields, filled with them.

    ``batches`` is called twice (e.g. ``lambda: store.iter_vectors(marginalized=False)``):
    a first pass counts the vectors and keeps a uniform random sample, a second adds
    them. Memory stays bounded by the sample, not by the number of vectors. Above
    ``policy.exact_below`` vectors the sample trains an :class:`IvfIndex` whose
    ``nprobe`` is then calibrated (:func:`calibrate_nprobe`).
    """
    with all_cores():
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
