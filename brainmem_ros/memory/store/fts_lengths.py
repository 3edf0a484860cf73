"""BM25's length normalisation against the memories a query matches, not the whole store.

FTS5's ``bm25()`` (k1 = 1.2, b = 0.75) compares each memory's length with the mean length
of every row. A robot's store mixes kinds of memory of very different lengths: weeks of
short routine observations ("Put the mug on the table in the kitchen.", 8 words) beside
long ones (a conversation turn, an incident report: 20-30). The routine pulls the store's
mean down, and every long memory is then scored as if it were far too long, against the
other long memories it competes with for a question about them. Measured on the LoCoMo
dev split with 5,000 routine observations stored beside each conversation (docs/
retrieval.md): BM25 alone fell from 0.675 to 0.635 recall@10, and the default ranking
from 0.786 to 0.732, although no routine memory reached the top 10 of 754 of the 762
questions.

The fix rescales each match's BM25 as if the mean length were that of the matches: the
memories competing for this query. In a store of one kind of memory that is about the
store's mean and little changes. The matches' mean is a geometric one: a long memory is
more likely than a short one to hold one of the query's words, so the matches are longer
than the memories of their kind, and their arithmetic mean favoured long memories even
in a store of one kind. Compared on 2026-12-02 (one-off runs, the recall probe's protocol,
the dev split alone / beside the routine): FTS5's own 0.786 / 0.732, arithmetic mean of
the matches 0.782 / 0.768, harmonic 0.787 / 0.756, geometric 0.787 / 0.765.

A term occurring once in a memory (most terms, in memories this short) scores ``idf x
(k1 + 1) / (1 + k1 x K)`` with ``K = 1 - b + b x length / mean``, so replacing the mean
multiplies the score by ``(1 + k1 K_store) / (1 + k1 K_pool)``: exact for such terms,
close for the rest. Only the text column's length is used (the entity-name column is
short and follows it).

The lengths are FTS5's own, read from its shadow tables, which are part of SQLite's
file format: ``units_fts_docsize`` (one varint per column per row) and the averages
record (row 1 of ``units_fts_data``: the row count, then the total tokens per column).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

# FTS5's bm25() constants (fts5_aux.c).
K1 = 1.2
B = 0.75

Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


def varints(blob: bytes) -> list[int]:
    """The SQLite varints in ``blob`` (big-endian, 7 bits a byte, the 9th byte whole).

    >>> varints(bytes([5, 0x81, 0x00, 0x7f]))
    [5, 128, 127]
    """
    out: list[int] = []
    i, n = 0, len(blob)
    while i < n:
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80 or i >= n:
                break
        out.append(value)
    return out


def store_mean_length(query: Query) -> float | None:
    """Mean tokens in the text column over every row of the index (None: not readable)."""
    rows = query('SELECT block FROM units_fts_data WHERE id = 1', ())
    if not rows or not rows[0][0]:
        return None
    record = varints(bytes(rows[0][0]))
    if len(record) < 2 or record[0] <= 0:
        return None
    return record[1] / record[0]


def pool_normalised(bm25: npt.NDArray[np.float64], sizes: Sequence[bytes | None], store_mean: float,
                    pivot: float) -> npt.NDArray[np.float64]:
    """FTS5's ``bm25()`` scores (lower is better) of matches rescored against the matches'
    mean length; ``sizes``: each match's ``units_fts_docsize.sz`` (None: no row).

    ``pivot``: 0 keeps the store's mean (FTS5's scores), 1 uses the (geometric) mean length
    of the matches, in between blends the two. Matches without a known length keep their score.

    >>> scores = np.array([-6.0, -9.0])  # a short memory, a long one
    >>> pool_normalised(scores, [bytes([2, 0]), bytes([30, 1])], 6.0, 1.0).round(2).tolist()
    [-6.26, -10.91]
    """
    n = len(bm25)
    # -1: no length known (one byte below 128 tokens is the common case, read without
    # the general decoder).
    length = np.fromiter((-1 if not sz else sz[0] if sz[0] < 0x80 else varints(bytes(sz))[0]
                          for sz in sizes), dtype=np.float64, count=n)
    known = length >= 0.0
    if pivot <= 0.0 or store_mean <= 0.0 or not known.any():
        return bm25
    # Geometric: see the module's docstring.
    pool = float(np.exp(np.mean(np.log(np.maximum(length[known], 1.0)))))
    mean = (1.0 - pivot) * store_mean + pivot * pool
    if mean <= 0.0:
        return bm25
    at_store = 1.0 - B + B * length / store_mean
    at_pool = 1.0 - B + B * length / mean
    out: npt.NDArray[np.float64] = np.where(known, bm25 * (1.0 + K1 * at_store) / (1.0 + K1 * at_pool), bm25)
    return out
