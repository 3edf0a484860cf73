"""How typical a candidate is of what the query found: a family the query cannot tell apart.

A robot logs the same kind of moment hundreds of times ("Docked at the charging station;
battery at 77 percent", "Put the mug on the stove in the kitchen"). When a question
matches such a family, it matches all of its members about equally, and together they
fill the top k ahead of the one memory that says something else (the closet key kept
with the vacuum charger), although each adds little that its siblings do not. Habituation
in the brain answers the same problem: what repeats is recalled as less informative than
what stands out.

A candidate's *copies* are the other candidates that are near-copies of it and that the
query ranks about as high. Near: 0 below ``threshold`` cosine, rising to 1 at cosine 1
(the same scale as the redundancy of :mod:`brainmem_ros.memory.diversity`). As high: the
weight is multiplied by ``min(1, score_j / score_i) ** 16``, so a near-copy scored 5%
lower counts about half and one 15% lower hardly at all. When the query singles a memory
out of its family ("where did I put the mug?" among a hundred "Put the ... on the ..."),
its siblings score lower and it keeps its rank; when it cannot (a hundred battery
levels), the family steps back. The score is multiplied by ``1 - typicality`` with
``typicality = 1 - 1 / (1 + weight x ln(1 + copies))``: ten equal copies keep about 58%
of the score and a hundred about 42% (weight 0.3). Diversity, which happens afterwards,
only steps back copies of a memory already placed; this step decides whether the family
as a whole outranks a distinct match. docs/retrieval.md gives the measurements, both
for questions about a distinct memory and for questions about the routine itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

# How sharply a near-copy's weight falls with its score below the memory's own.
_RANK_POWER = 16


def typicality(vectors: Sequence[npt.NDArray[np.float32]], scores: npt.NDArray[np.float64], *,
               weight: float, threshold: float) -> npt.NDArray[np.float64]:
    """The share of its score each candidate loses for its near-copies that score about as high.

    ``vectors`` are unit-norm, ``scores`` the candidates' scores before this step, in the
    same order.

    >>> import numpy as np
    >>> a, b = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
    >>> t = typicality([a, a, a, b], np.array([1.0, 1.0, 1.0, 0.5]), weight=0.3, threshold=0.75)
    >>> [round(float(x), 3) for x in t]
    [0.248, 0.248, 0.248, 0.0]
    >>> t = typicality([a, a, b], np.array([1.0, 0.5, 0.5]), weight=0.3, threshold=0.75)
    >>> [round(float(x), 3) for x in t]  # the query singles the first out of its family
    [0.0, 0.172, 0.0]
    """
    n = len(vectors)
    if n <= 1 or weight <= 0.0:
        return np.zeros(n, dtype=np.float64)
    matrix = np.stack(vectors).astype(np.float32, copy=False)
    # In place, in float32: this runs on every Retrieve over a few hundred candidates.
    near = matrix @ matrix.T
    near -= threshold
    np.clip(near, 0.0, 1.0 - threshold, out=near)
    score = np.maximum(np.asarray(scores, dtype=np.float32), np.float32(1e-9))
    near *= np.minimum(np.float32(1.0), score[None, :] / score[:, None]) ** _RANK_POWER
    # Each vector is a perfect copy of itself: not one of its copies.
    copies = np.maximum(0.0, near.sum(axis=1, dtype=np.float64) / (1.0 - threshold) - 1.0)
    out: npt.NDArray[np.float64] = 1.0 - 1.0 / (1.0 + weight * np.log1p(copies))
    return out
