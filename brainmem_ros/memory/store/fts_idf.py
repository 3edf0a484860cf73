"""BM25's term weights against the memories a query matches, not only the whole store.

BM25 weighs each query term by its IDF over the whole store. A robot's store mixes
kinds of memory: weeks of routine observations beside a conversation with the user or
an incident's reports. The words that run through one kind (the speaker's name in every
turn of a conversation, "the user" in every routine report) are rare in the store as a
whole, so they weigh nearly as much as the words that tell that kind's memories apart:
adding N memories that never use a word raises its IDF by about ``log(1 + N / n)``,
the same for every such word, which shrinks the ratio between a common and a rare one.
Measured on the LoCoMo dev split with a robot's routine stored beside each conversation
(the recall probe's protocol, docs/retrieval.md): recall@10 fell from 0.787 alone to
0.765 beside 5,000 routine observations and 0.747 beside 20,000, although no routine
memory reached the top 10 of almost any question.

The matches of the query (the newest ones that ``fts_window`` ranks) are a sample of
the memories the question is about. Within them a word that runs through every match
tells the matches apart no better than a stop word, however rare it is in the store. So
each matched term gets the query's store-wide IDF mass shared out by its IDF among the
matches, and keeps the smaller of that and its own store-wide IDF:

    w(t) = min(idf(t), s x idf_pool(t)),  s = sum of idf(t) / sum of idf_pool(t)

A term is never weighed above its store-wide IDF, so a memory holding only the rare
words of the query scores what FTS5 gives it; what changes is that a memory holding only
the words common among the matches scores less. A query of one matched term is left as
it is. FTS5 cannot weigh terms itself, so each match's BM25 is rescaled by
``sum of w(t) / sum of idf(t)`` over the terms it holds: exact for BM25's sum of
per-term parts when the terms' parts share the memory's length factor (terms occurring
once, as most do in memories this short).

Chosen on 2026-12-02 by one-off runs (the recall probe's protocol; dev split alone /
beside 5,000 / beside 20,000 routine observations): store-wide IDF 0.787 / 0.765 /
0.747; the pool's IDF in place of the store's (mass kept) 0.785 / 0.781 / 0.778, but
the questions about the routine itself (docs/retrieval.md) fell from 26 to 18 of 40:
a memory holding only a query's rarest word got a full match's score; the form above
0.789 / 0.780 / 0.780 and 23 of 40; half of it blended with the store-wide IDF 0.786 /
0.768 / 0.760 and 26 of 40.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt


def idf(df: int, total: int) -> float:
    """BM25's inverse document frequency, never below 0 (the form of Lucene's BM25)."""
    return math.log(1.0 + (max(total, df) - df + 0.5) / (df + 0.5))


def fts5_idf(df: int, total: int) -> float:
    """The IDF FTS5's ``bm25()`` gives a phrase in ``df`` of ``total`` rows (fts5_aux.c)."""
    value = math.log((total - df + 0.5) / (df + 0.5))
    return value if value > 0.0 else 1e-6


def pool_weights(store_idf: Mapping[str, float], held: Mapping[str, int], pool: int, blend: float
                 ) -> dict[str, float]:
    """Each matched term's weight: ``store_idf`` lowered for terms common among the ``pool``
    matches (``held``: term -> matches holding it); ``blend`` 0 keeps the store's IDF.

    >>> w = pool_weights({'caroline': 3.0, 'lgbtq': 7.0}, {'caroline': 300, 'lgbtq': 5}, 400, 1.0)
    >>> round(w['caroline'], 2), w['lgbtq']
    (0.63, 7.0)
    """
    among = {t: idf(n, pool) for t, n in held.items() if n and t in store_idf}
    total = sum(among.values())
    if len(among) < 2 or total <= 0.0:
        return {t: store_idf[t] for t in among}
    share = sum(store_idf[t] for t in among) / total
    return {t: (1.0 - blend) * store_idf[t] + blend * min(store_idf[t], share * a) for t, a in among.items()}


Hits = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]


def rescored(bm25: npt.NDArray[np.float64], phrases: Sequence[str], hits: Hits,
             store_idf: Mapping[str, float], blend: float,
             caps: Mapping[str, float] | None = None) -> npt.NDArray[np.float64]:
    """The ``bm25()`` scores of a query's matches rescaled by the pool weights of the terms
    each holds.

    ``hits``: (index into ``phrases``, index into ``bm25``) of each phrase a match holds.
    Matches holding no phrase of ``store_idf`` keep their score. ``caps`` bound the weight
    of chosen phrases (a synonym counts for no more than a share of the word it stands for).

    >>> bm25 = np.array([-9.0, -3.0, -6.0])  # the three matches of a two-word query
    >>> hits = (np.array([0, 0, 0, 1]), np.array([0, 1, 2, 0]))  # "we" in all, "kayak" in the first
    >>> idf = {'"we"': 1.0, '"kayak"': 2.0}
    >>> rescored(bm25, ['"we"', '"kayak"'], hits, idf, 1.0).round(2).tolist()
    [-7.08, -1.08, -2.16]
    """
    phrase_of, row_of = hits
    held = np.bincount(phrase_of, minlength=len(phrases))
    counts = {p: int(n) for p, n in zip(phrases, held, strict=True)}
    weights = pool_weights(store_idf, counts, len(bm25), blend)
    for p, cap in (caps or {}).items():
        if p in weights:
            weights[p] = min(weights[p], cap)
    if not weights or all(weights[p] == store_idf[p] for p in weights):
        return bm25
    w = np.array([weights.get(p, 0.0) for p in phrases])
    g = np.array([store_idf[p] if p in weights else 0.0 for p in phrases])
    num = np.bincount(row_of, weights=w[phrase_of], minlength=len(bm25))
    den = np.bincount(row_of, weights=g[phrase_of], minlength=len(bm25))
    scale = np.divide(num, den, out=np.ones(len(bm25)), where=den > 0.0)
    out: npt.NDArray[np.float64] = bm25 * scale
    return out
