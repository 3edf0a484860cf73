"""How typical a candidate is of what the query found: a month of routine answers as one memory.

A robot logs the same kind of moment hundreds of times ("Put the mug on the stove in the
kitchen", "Opened the stove and closed it again"). Each of them matches a question about
the stove about as well as the others, and better than the one memory that says
something (the stove was hot and the gripper overheated), simply because there are so
many of them to match the question's words in every combination. Habituation in the
brain answers the same problem: what repeats is encoded and recalled as less informative
than what stands out.

A candidate's *copies* are the other candidates of the same query weighed by how near a
copy each is: 0 below ``threshold`` cosine, rising to 1 at cosine 1 (the same scale as
the redundancy of :mod:`brainmem_ros.memory.diversity`). Its score is multiplied by
``1 - typicality``, where ``typicality = 1 - 1 / (1 + weight x ln(1 + copies))``:
a memory with no near-copy keeps its score, one with ten near-copies about 58% of it and
one with a hundred about 42% (weight 0.3). The logarithm keeps a memory that is merely repeated a few
times close to its rank, like the IDF of a word. Diversity, which happens afterwards,
only steps back copies of a memory already placed; this step decides whether the
routine as a whole outranks a distinct match.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def typicality(vectors: Sequence[npt.NDArray[np.float32]], *, weight: float,
               threshold: float) -> npt.NDArray[np.float64]:
    """The share of its score each of ``vectors`` (unit-norm) loses for its near-copies among them.

    >>> import numpy as np
    >>> a, b = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
    >>> [round(float(t), 3) for t in typicality([a, a, a, b], weight=0.3, threshold=0.75)]
    [0.248, 0.248, 0.248, 0.0]
    """
    n = len(vectors)
    if n <= 1 or weight <= 0.0:
        return np.zeros(n, dtype=np.float64)
    matrix = np.stack(vectors).astype(np.float32, copy=False)
    # In place, in float32: this runs on every Retrieve over a few hundred candidates.
    near = matrix @ matrix.T
    near -= threshold
    np.clip(near, 0.0, 1.0 - threshold, out=near)
    # Each vector is a perfect copy of itself: not one of its copies.
    copies = np.maximum(0.0, near.sum(axis=1, dtype=np.float64) / (1.0 - threshold) - 1.0)
    out: npt.NDArray[np.float64] = 1.0 - 1.0 / (1.0 + weight * np.log1p(copies))
    return out
