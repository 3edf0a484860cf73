"""Full-text recall: BM25 over the FTS5 index, and the document counts of query terms."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from brainmem_ros.encoders.cache import LruCache
from brainmem_ros.errors import StoreError
from brainmem_ros.memory.config import StoreConfig
from brainmem_ros.memory.store import fts_idf, fts_lengths
from brainmem_ros.memory.store.connection import Connection
from brainmem_ros.memory.store.sql import filter_sql, qmarks
from brainmem_ros.memory.types import UnitFilter

# Document counts of query words in a read-only store are counted up to this.
_COUNT_CAP = 10000
# Index terms whose document counts are kept (_vocabulary_counts).
_DOC_COUNTS_HELD = 4096
# Texts whose index terms are kept (_terms): a word is always stemmed the same way.
_TERMS_HELD = 4096


class TextSearch(Connection):
    """The ``units_fts`` index."""

    def __init__(self, path: Path, *, config: StoreConfig | None = None) -> None:
        # term_document_counts' temporary tables: None not yet made, True made, False
        # impossible (a read-only store).
        self._term_tables: bool | None = None
        # term -> (units containing it, max(id) when counted): see _vocabulary_counts.
        self._doc_counts: LruCache[str, tuple[int, int]] = LruCache(_DOC_COUNTS_HELD)
        self._terms_held: LruCache[str, frozenset[str]] = LruCache(_TERMS_HELD)
        super().__init__(path, config=config)

    def fts_scored(self, match: str, *, limit: int, unit_filter: UnitFilter) -> list[tuple[int, float]]:
        """(unit id, BM25 score > 0) of the best matches of an FTS5 MATCH expression, best first."""
        return self.fts_window(match, limit=limit, unit_filter=unit_filter)[0]

    def fts_window(self, match: str, *, limit: int, unit_filter: UnitFilter, pool_length: float = 0.0,
                   term_idf: Mapping[str, float] | None = None, pool_idf: float = 0.0,
                   term_caps: Mapping[str, float] | None = None, ties: int = 0
                   ) -> tuple[list[tuple[int, float]], dict[int, float]]:
        """The best matches of an FTS5 MATCH expression, and the BM25 of every match ranked.

        First: (unit id, BM25 score > 0) of the best ``limit`` visible matches, best first.
        Second: the BM25 of each match this call ranked, visible or not: the lexical
        evidence of candidates that other lists found, at no extra cost (asking FTS5 for
        the score of given rowids scans every match of the query: 100 ms at 100k units).

        Ranking every match grows with the store (seconds for common words at 1M units),
        so only the newest ``max(10 x limit, 1000)`` matches are ranked (ranking is most
        of this call's time: 2.2 ms for 1,000 matches, 5.1 ms for 2,500 at 100k units): rare
        words (names, numbers), which are what lexical recall is for, have few matches and
        are found at any age; common words are covered by the vector index anyway. A filter
        that narrows (episode, time, place, types) is applied inside the query, so the
        newest matches counted are matches *of the filter*.

        ``pool_length`` > 0 rescores the ranked matches against their own mean length
        instead of the store's (:mod:`~brainmem_ros.memory.store.fts_lengths`). ``pool_idf``
        > 0 weighs the terms by their IDF among the ranked matches
        (:mod:`~brainmem_ros.memory.store.fts_idf`); ``term_idf`` gives each phrase of
        ``match`` (as written there, quotes included) its store-wide IDF. ``ties`` > 0 also takes
        the next-best matches that runs of equal scores push out of the best ``limit``
        (``_past_ties``).
        """
        if limit <= 0:
            return [], {}
        scan = max(limit * 10, 1000)
        # Arrays from here on: as tuples, a thousand rows went through five Python loops
        # (2.3 million function calls in 300 queries at 10k units, 0.5 million now), on a
        # thread that shares the interpreter with the encoder's.
        ids, bm25 = self._ranked(match, scan, unit_filter if unit_filter.narrows else None, pool_length)
        if (pool_idf > 0.0 or term_caps) and term_idf and len(term_idf) > 1 and len(ids) > 1:
            phrases = list(term_idf)
            bm25 = fts_idf.rescored(bm25, phrases, self._hits(phrases, ids), term_idf, pool_idf, term_caps)
        order = np.argsort(bm25, kind='stable')  # bm25: lower is better; newer first among equals
        ordered = -bm25[order]
        ranked = ids[order].tolist()
        scores = ordered.tolist()
        window = dict(zip(ranked, scores, strict=True))
        if ties > 0 and len(ranked) > limit:
            picked = _past_ties(ordered, limit, ties)
            ranked, scores = [ranked[i] for i in picked], [scores[i] for i in picked]
            limit = len(ranked)
        if unit_filter.narrows:
            return list(zip(ranked[:limit], scores[:limit], strict=True)), window
        # Best first, only as far as ``limit`` visible ones: checking all 1,000 was a
        # quarter of this call (py-spy, 10k store), and hidden units are few.
        cond, params = filter_sql(unit_filter)
        visible: list[tuple[int, float]] = []
        start, step = 0, 2 * limit
        while start < len(ranked) and len(visible) < limit:
            chunk = ranked[start:start + step]
            shown = {r[0] for r in self._query(
                f'SELECT id FROM units u WHERE id IN ({qmarks(len(chunk))}) AND {cond}', (*chunk, *params))}
            visible += [(uid, window[uid]) for uid in chunk if uid in shown]
            start, step = start + step, min(2 * step, 500)
        return visible[:limit], window

    def _ranked(self, match: str, scan: int, unit_filter: UnitFilter | None, pool_length: float
                ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Rowids and ``bm25()`` of the newest ``scan`` matches (of ``unit_filter`` when given),
        newest first, rescored against their own mean length when ``pool_length`` > 0."""
        cond, params = filter_sql(unit_filter) if unit_filter is not None else ('1', ())
        join = 'JOIN units u ON u.id = f.rowid ' if unit_filter is not None else ''
        sql = (f'SELECT f.rowid, bm25(units_fts){{sz}} FROM units_fts f {join}{{size_join}}'
               f'WHERE units_fts MATCH ? AND {cond} ORDER BY f.rowid DESC LIMIT ?')
        args = (match, *params, scan)
        if pool_length > 0.0:
            try:
                # The lengths in the same statement: a second one for 1,000 rowids cost
                # three times as much at 100k units.
                sized = self._query(sql.format(sz=', d.sz', size_join='LEFT JOIN units_fts_docsize d '
                                                                      'ON d.id = f.rowid '), args)
                mean = fts_lengths.store_mean_length(self._query) if sized else None
            except StoreError:
                pass  # FTS5 keeps no lengths (columnsize=0): FTS5's own scores, asked again below
            else:
                ids, bm25, sizes = _columns(sized)
                if mean is not None:  # None: no matches, or no averages record: FTS5's own scores
                    bm25 = fts_lengths.pool_normalised(bm25, sizes, mean, pool_length)
                return ids, bm25
        ids, bm25, _ = _columns(self._query(sql.format(sz='', size_join=''), args))
        return ids, bm25

    def _hits(self, phrases: Sequence[str], ids: npt.NDArray[np.int64]
              ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(index into ``phrases``, index into ``ids``) of each phrase each of ``ids`` matches.

        One MATCH per phrase from the oldest of ``ids`` on: every newer match of a
        phrase is a match of the OR-query, so without a filter each phrase returns at
        most as many rowids as ``ids`` holds.
        """
        sql = ' UNION ALL '.join(f'SELECT {i}, rowid FROM units_fts WHERE units_fts MATCH ? AND rowid >= ?'
                                 for i in range(len(phrases)))
        found = np.array(self._query(sql, tuple(a for p in phrases for a in (p, int(ids.min())))),
                         dtype=np.int64).reshape(-1, 2)
        order = np.argsort(ids)
        ascending = ids[order]
        at = np.minimum(np.searchsorted(ascending, found[:, 1]), len(ids) - 1)
        inside = ascending[at] == found[:, 1]  # a filtered window leaves other matches out
        return found[inside, 0], order[at[inside]]

    def term_document_counts(self, words: Sequence[str]) -> tuple[dict[str, int], int]:
        """(index term -> number of units containing it, number of units) for ``words``.

        The words go through the full-text index's own tokenizer (a temporary FTS5
        table), so the terms are exactly those BM25 scores; terms no unit has are absent.
        A store opened read-only cannot write even temporary tables: there each word is
        counted by a MATCH of its own, up to ``_COUNT_CAP`` units.
        """
        if not words:
            return {}, 0
        with self._lock:
            try:
                total = int(self._db.execute('SELECT max(id) FROM units').fetchone()[0] or 0)
                if self._term_tables is not False:
                    try:
                        return self._vocabulary_counts(words, total), total
                    except sqlite3.OperationalError:
                        if self._term_tables:
                            raise
                        self._term_tables = False  # read-only: never try again
                counts: dict[str, int] = {}
                for word in dict.fromkeys(words):
                    n = int(self._db.execute(
                        'SELECT count(*) FROM (SELECT rowid FROM units_fts WHERE units_fts MATCH ? LIMIT ?)',
                        ('"' + word.replace('"', '') + '"', _COUNT_CAP)).fetchone()[0])
                    if n:
                        counts[word] = n
                return counts, total
            except sqlite3.Error as exc:
                msg = f'memory store read failed: {exc}'
                raise StoreError(msg) from None

    def terms_of(self, texts: Sequence[str]) -> list[frozenset[str]] | None:
        """The index terms of each of ``texts``, through the full-text index's own tokenizer.

        What a text not in this store (another robot's shared memory) would be indexed
        as, so that its words can be weighed with this store's document counts. None
        for a store opened read-only (no temporary tables there).
        """
        if not texts:
            return []
        with self._lock:
            try:
                if self._term_tables is False:
                    return None
                try:
                    return self._terms(texts)
                except sqlite3.OperationalError:
                    if self._term_tables:
                        raise
                    self._term_tables = False
                    return None
            except sqlite3.Error as exc:
                msg = f'memory store read failed: {exc}'
                raise StoreError(msg) from None

    def _terms(self, texts: Sequence[str]) -> list[frozenset[str]]:
        """The index terms of each of ``texts``; tokenized once (a Retrieve asks for the same
        words two or three times, and a robot's questions repeat their words), each new text
        through a temporary FTS5 table: three statements for all of them."""
        todo = [t for t in dict.fromkeys(texts) if self._terms_held.get(t) is None]
        if todo:
            self._make_term_tables()
            self._db.executemany('INSERT INTO temp.query_words(rowid, w) VALUES (?, ?)',
                                 [(i + 1, t) for i, t in enumerate(todo)])
            try:
                found: list[set[str]] = [set() for _ in todo]
                for term, doc in self._db.execute('SELECT DISTINCT term, doc FROM temp.query_words_i'):
                    found[int(doc) - 1].add(str(term))
            finally:
                self._db.execute('DELETE FROM temp.query_words')
            for text, terms in zip(todo, found, strict=True):
                self._terms_held.put(text, frozenset(terms))
        out: list[frozenset[str]] = []
        for t in texts:
            held = self._terms_held.get(t)
            # Evicted meanwhile only by thousands of new texts in one call: tokenize again.
            out.append(held if held is not None else self._terms([t])[0])
        return out

    def _make_term_tables(self) -> None:
        if self._term_tables is None:
            self._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words "
                             "USING fts5(w, tokenize='porter unicode61')")
            self._db.execute('CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words_i '
                             'USING fts5vocab(temp, query_words, instance)')
            self._db.execute('CREATE VIRTUAL TABLE IF NOT EXISTS temp.units_fts_v '
                             'USING fts5vocab(main, units_fts, row)')
            self._term_tables = True

    def _vocabulary_counts(self, words: Sequence[str], total: int) -> dict[str, int]:
        """Document counts of the index terms of ``words`` (terms no unit has are absent).

        FTS5 counts a term's documents by reading its whole doclist: 7 ms for five
        common words at 1M units, every Retrieve. A count is kept until the store has
        grown by 1% since it was taken; an IDF moves by far less than that in between.
        """
        terms = sorted(frozenset().union(*self._terms(words)))
        fresh: dict[str, int] = {}
        for t in terms:
            held = self._doc_counts.get(t)
            if held is not None and total <= held[1] + held[1] // 100:
                fresh[t] = held[0]
        todo = [t for t in terms if t not in fresh]
        if todo:
            found = {str(t): int(n) for t, n in self._db.execute(
                f'SELECT term, doc FROM temp.units_fts_v WHERE term IN ({qmarks(len(todo))})', todo)}
            for t in todo:
                fresh[t] = found.get(t, 0)
                self._doc_counts.put(t, (fresh[t], total))
        # In the terms' order, held or not: the sums over them come out the same to the last bit.
        return {t: fresh[t] for t in terms if fresh[t]}


def _columns(rows: Sequence[tuple[Any, ...]]
             ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], tuple[Any, ...]]:
    """``(rowid, bm25[, sz])`` rows as rowids, scores and the sizes (() without that column)."""
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), ()
    columns = tuple(zip(*rows, strict=True))
    return (np.array(columns[0], dtype=np.int64), np.array(columns[1], dtype=np.float64),
            columns[2] if len(columns) > 2 else ())


def _past_ties(scores: npt.NDArray[np.float64], limit: int, ties: int) -> list[int]:
    """Positions in a ranking (``scores``, best first) of its best ``limit``, and of as many
    more matches as runs of equal scores hid.

    Memories with one BM25 score hold the same query words in texts of one length: a
    routine logged a hundred times ("The book is on the charging dock.", "The bowl is on
    ...") that the words cannot tell apart. Such a run fills the best ``limit`` and the
    next-best match ("My charging dock is next to the kitchen door.") never becomes a
    candidate. So the best ``limit`` matches counting at most ``ties`` of each run are
    candidates too; the runs stay whole among the best ``limit`` (typicality counts them).
    """
    new_run = np.ones(len(scores), dtype=bool)
    new_run[1:] = ~np.isclose(scores[1:], scores[:-1], rtol=1e-9, atol=0.0)
    starts = np.flatnonzero(new_run)
    rank_in_run = np.arange(len(scores)) - starts[np.cumsum(new_run) - 1]
    keep = np.zeros(len(scores), dtype=bool)
    keep[:limit] = True
    keep[np.flatnonzero(rank_in_run < ties)[:limit]] = True
    return np.flatnonzero(keep).tolist()
