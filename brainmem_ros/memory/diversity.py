"""Near-copies of better memories step back: the last step of the ranking.

A month of routine logs the same sentence with one word changed hundreds of times
("Docked at the charging station; battery at 77 percent"); each copy matches a
question as well as the others, and together they fill the top k with one piece of
information. Greedily (maximal marginal relevance), each next memory is the one with
the best ``score x (1 - diversity x redundancy)``, where redundancy is how far its
cosine to a memory already placed exceeds ``threshold``, scaled to [0, 1].
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

Vectors = Callable[[Iterable[int]], dict[int, npt.NDArray[np.float32]]]


def diversify(ids: Sequence[int], order: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], k: int,
              *, diversity: float, threshold: float, vectors: Vectors
              ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Reorder the head of ``order`` (positions into ``ids`` and ``scores``, best first).

    The best ``k + 60`` distinct vectors (at least ``4k``) take part, ``2k`` of them are
    placed greedily, the others follow by their stepped-back score; exact copies (the
    same vector: text duplicates, which the caller skips) and the rest keep their order
    after them. ``vectors`` reads unit vectors by id. Returns the new order, the scores
    (stepped back) and each position's redundancy.
    """
    redundancy = np.zeros(len(scores), dtype=np.float64)
    if diversity <= 0.0 or len(order) <= 1:
        return order, scores, redundancy
    pool_list, rows = distinct_head(ids, order, max(4 * k, k + 60), vectors)
    pool = np.asarray(pool_list, dtype=np.int64)
    if len(pool) <= 1:
        return order, scores, redundancy
    matrix = np.stack(rows)
    copy = np.clip((matrix @ matrix.T).astype(np.float64) - threshold, 0.0, None)
    copy = np.minimum(1.0, copy / (1.0 - threshold))
    base = scores[pool]
    red = np.zeros(len(pool), dtype=np.float64)
    free = np.ones(len(pool), dtype=bool)
    placed: list[int] = []
    # Each placement can only lower what the others may reach, so scores stay sorted.
    for _ in range(min(len(pool), 2 * k)):
        j = int(np.argmax(np.where(free, base * (1.0 - diversity * red), -np.inf)))
        placed.append(j)
        free[j] = False
        red = np.maximum(red, copy[j] * free)  # a placed memory keeps the redundancy it had
    stepped = base * (1.0 - diversity * red)
    others = np.flatnonzero(free)
    placed += others[np.argsort(-stepped[others], kind='stable')].tolist()
    redundancy[pool] = red
    new_scores = scores.copy()
    new_scores[pool] = stepped
    in_pool = set(pool.tolist())
    rest = np.asarray([i for i in order if i not in in_pool], dtype=np.int64)
    return np.concatenate([pool[placed], rest]), new_scores, redundancy


def distinct_head(ids: Sequence[int], order: npt.NDArray[np.int64], size: int, vectors: Vectors
                  ) -> tuple[list[int], list[npt.NDArray[np.float32]]]:
    """Up to ``size`` positions of ``order``, best first, whose vectors differ, and those vectors.

    A routine sentence logged a hundred times would otherwise fill the pool with copies
    of itself; the scan stops after ``8 x size`` positions.
    """
    pool: list[int] = []
    rows: list[npt.NDArray[np.float32]] = []
    seen: set[bytes] = set()
    for start in range(0, min(len(order), 8 * size), 2 * size):
        chunk = order[start:start + 2 * size]
        found = vectors(ids[i] for i in chunk)
        for i in chunk:
            vec = found.get(ids[i])
            if vec is None or (key := vec.tobytes()) in seen:
                continue
            seen.add(key)
            pool.append(int(i))
            rows.append(vec)
            if len(pool) == size:
                return pool, rows
    return pool, rows
