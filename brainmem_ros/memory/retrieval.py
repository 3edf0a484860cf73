"""Goal-directed retrieval: hybrid recall, filters, spreading activation, rerank."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from brainmem_ros.encoders.base import Embedder
from brainmem_ros.memory.adjacency import Adjacency
from brainmem_ros.memory.config import RetrievalConfig
from brainmem_ros.memory.graph import spread
from brainmem_ros.memory.index import VectorIndex
from brainmem_ros.memory.store import SqliteStore, UnitHead
from brainmem_ros.memory.types import (
    Edge,
    Pose,
    ScoredMemory,
    ScoreParts,
    UnitType,
    normalise_name,
)

# Weight of each query part in relevance: the query says what to recall; the goal
# and the current state colour it.
_PART_WEIGHTS = (1.0, 0.85, 0.6)

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_STOPWORDS = frozenset({
    'a', 'an', 'the', 'and', 'or', 'of', 'to', 'in', 'on', 'at', 'by', 'for', 'with', 'from', 'is',
    'are', 'was', 'were', 'be', 'been', 'it', 'its', 'this', 'that', 'these', 'those', 'i', 'me', 'my',
    'we', 'our', 'you', 'your', 'he', 'she', 'they', 'them', 'what', 'where', 'when', 'which', 'who',
    'how', 'why', 'do', 'does', 'did', 'can', 'could', 'should', 'would', 'will', 'shall', 'may',
    'might', 'must', 'not', 'no', 'there', 'here', 'into', 'onto', 'over', 'under', 'up', 'down', 'out',
    'off', 'again', 'then', 'than', 'so', 'very', 'just', 'also', 'have', 'has', 'had', 'get', 'got',
})


@dataclass(frozen=True)
class Query:
    """A validated retrieval request."""

    query: str
    goal: str = ''
    state: str = ''
    top_k: int = 10
    episode_id: str | None = None
    types: frozenset[UnitType] | None = None
    since: float | None = None
    until: float | None = None
    near: Pose | None = None
    radius: float | None = None
    include_marginalized: bool = False
    as_of: float | None = None

    @property
    def parts(self) -> list[tuple[str, float]]:
        """Non-empty (text, weight) parts of the query."""
        return [(t, w) for t, w in zip((self.query, self.goal, self.state), _PART_WEIGHTS, strict=True)
                if t.strip()]


def fts_expression(text: str) -> str:
    """An FTS5 OR-query of the informative words of ``text`` (quoted: never FTS syntax)."""
    words = [w.lower() for w in _WORD.findall(text)]
    terms = [w for w in dict.fromkeys(words) if (len(w) > 2 or w.isdigit()) and w not in _STOPWORDS]
    return ' OR '.join('"' + t.replace('"', '') + '"' for t in terms[:32])


def entity_mentions(text: str, max_words: int = 3) -> list[str]:
    """Candidate entity keys in ``text``: its 1..3-word n-grams, normalised."""
    words = [w.lower() for w in _WORD.findall(text)]
    grams: list[str] = []
    for n in range(max_words, 0, -1):
        for i in range(len(words) - n + 1):
            gram = words[i:i + n]
            if gram[0] in _STOPWORDS or gram[-1] in _STOPWORDS:
                continue
            grams.append(normalise_name(' '.join(gram)))
    return list(dict.fromkeys(g for g in grams if g))


def rrf(rankings: Sequence[tuple[Sequence[int], float]], k: float) -> dict[int, float]:
    """Reciprocal-rank fusion of weighted ranked lists."""
    fused: dict[int, float] = {}
    for ranking, weight in rankings:
        for rank, uid in enumerate(ranking):
            fused[uid] = fused.get(uid, 0.0) + weight / (k + rank + 1)
    return fused


class Retriever:
    """Runs a :class:`Query` against the store, the hot index and the graph.

    The graph's edges come from ``adjacency`` (held in memory) when there is one, and
    from SQLite otherwise; both give the same edges.
    """

    def __init__(self, store: SqliteStore, index: VectorIndex, embedder: Embedder,
                 config: RetrievalConfig, *, adjacency: Adjacency | None = None) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.config = config
        self.adjacency = adjacency

    def recall(self, q: Query, qvecs: npt.NDArray[np.float32], weights: Sequence[float],
               width: int) -> dict[int, float]:
        """Wide hybrid recall: vector, lexical and entity lists fused by reciprocal rank."""
        rankings: list[tuple[Sequence[int], float]] = []
        if len(self.index):
            scores, ids = self.index.search(qvecs, width)
            best: dict[int, float] = {}
            for row, weight in enumerate(weights):
                for score, uid in zip(scores[row], ids[row], strict=True):
                    if uid >= 0:
                        best[int(uid)] = max(best.get(int(uid), -1.0), weight * float(score))
            rankings.append((sorted(best, key=lambda i: -best[i]), 1.0))
        if q.include_marginalized:
            rankings.append((self._scan_marginalized(qvecs, weights, width), 1.0))
        text = ' '.join(t for t, _ in q.parts)
        expression = fts_expression(text)
        if expression:
            rankings.append((self.store.fts_search(expression, limit=width,
                                                   active_only=not q.include_marginalized), 0.8))
        keys = self.store.known_entities(entity_mentions(text))
        if keys:
            per_key = self.store.units_with_entities(keys, per_key=width,
                                                     active_only=not q.include_marginalized)
            ranked = sorted({i for ids in per_key.values() for i in ids},
                            key=lambda i: -sum(i in ids for ids in per_key.values()))
            rankings.append((ranked[:width], 0.8))
        fused = rrf(rankings, self.config.rrf_k)
        top = sorted(fused, key=lambda i: -fused[i])[:width]
        return {uid: fused[uid] for uid in top}

    def _scan_marginalized(self, qvecs: npt.NDArray[np.float32], weights: Sequence[float],
                           width: int) -> list[int]:
        # Marginalized units are out of the hot index by design; asking for them
        # explicitly pays a scan of their vectors in SQLite.
        w = np.asarray(weights, dtype=np.float32)[:, None]
        best_ids: list[npt.NDArray[np.int64]] = []
        best_scores: list[npt.NDArray[np.float32]] = []
        for ids, vecs in self.store.iter_vectors(marginalized=True):
            sims = (w * (qvecs @ vecs.T)).max(axis=0)
            best_ids.append(ids)
            best_scores.append(sims)
        if not best_ids:
            return []
        ids_all = np.concatenate(best_ids)
        scores_all = np.concatenate(best_scores)
        order = np.argsort(-scores_all)[:width]
        return [int(i) for i in ids_all[order]]

    def run(self, q: Query, *, now: float) -> list[ScoredMemory]:
        """Retrieve, rerank and return the best ``q.top_k`` memories (no side effects)."""
        cfg = self.config
        texts = [t for t, _ in q.parts]
        weights = [w for _, w in q.parts]
        qvecs = self.embedder.embed(texts)
        width = max(q.top_k * cfg.recall_factor, q.top_k)
        fused = self.recall(q, qvecs, weights, width)
        if not fused:
            return []
        vectors = self.store.vectors(fused)
        relevance = dict(zip(vectors, _relevances(qvecs, weights, list(vectors.values())).tolist(),
                             strict=True))
        # Seeds start with their relevance relative to the best match, sharpened: the
        # few memories that really match the query drive activation, the wide tail of
        # recall barely does, so memories linked to the best matches can outrank it.
        best = max(relevance.values(), default=0.0) or 1.0
        seeds = {uid: (relevance.get(uid, 0.0) / best) ** cfg.seed_sharpness for uid in fused}
        activated = spread(seeds, self.neighbours, hops=cfg.hops, decay=cfg.hop_decay,
                           threshold=cfg.activation_threshold, max_activated=cfg.max_activated)
        # Filter and rank on the numeric columns; decode full units only for the winners.
        heads = [h for h in self.store.unit_heads(activated, with_pose=q.near is not None).values()
                 if self._passes(h, q, seeded=h.id in seeds)]
        vectors.update(self.store.vectors([h.id for h in heads if h.id not in vectors]))
        heads = [h for h in heads if h.id in vectors]
        if not heads:
            return []
        levels = np.fromiter((activated[h.id].level for h in heads), dtype=np.float64, count=len(heads))
        scores, parts = self._scores(heads, _relevances(qvecs, weights, [vectors[h.id] for h in heads]),
                                     levels, now=now, q=q)
        # Best score first, newer id first among equals; only the top k leave as units.
        order = np.lexsort((-np.fromiter((h.id for h in heads), dtype=np.int64, count=len(heads)),
                            -scores))[:q.top_k]
        units = self.store.get_units(heads[i].id for i in order)
        return [ScoredMemory(unit=units[heads[i].id], score=float(scores[i]),
                             parts=ScoreParts(*(float(p[i]) for p in parts)),
                             path=activated[heads[i].id].path)
                for i in order if heads[i].id in units]

    def neighbours(self, ids: Sequence[int]) -> Mapping[int, Sequence[Edge]]:
        """The strongest ``fanout`` edges of each unit: what activation spreads along."""
        if self.adjacency is not None:
            # Answers from SQLite itself when fanout was raised beyond what it holds.
            return self.adjacency.edges_of(ids, fanout=self.config.fanout)
        return self.store.edges_of(ids, fanout=self.config.fanout)

    def _passes(self, unit: UnitHead, q: Query, *, seeded: bool) -> bool:
        if q.episode_id is not None and unit.episode_id != q.episode_id:
            return False
        if q.types is not None and unit.type not in q.types:
            return False
        if q.since is not None and unit.stamp < q.since:
            return False
        if q.until is not None and unit.stamp > q.until:
            return False
        if q.as_of is not None:
            if unit.stamp > q.as_of or unit.valid_from > q.as_of:
                return False
            if unit.valid_until is not None and unit.valid_until <= q.as_of:
                return False
        if q.near is not None and q.radius is not None:
            if unit.pose is None or unit.pose.distance(q.near) > q.radius:
                return False
        # Marginalized units stay reachable through the graph, not through recall.
        return not (unit.marginalized and seeded and not q.include_marginalized)

    def _scores(self, heads: Sequence[UnitHead], relevance: npt.NDArray[np.float64],
                levels: npt.NDArray[np.float64], *, now: float, q: Query
                ) -> tuple[npt.NDArray[np.float64], tuple[npt.NDArray[np.float64], ...]]:
        """Scores of ``heads`` and their parts (relevance, recency, importance, activation).

        One array operation per term instead of Python per unit: up to
        ``max_activated`` units are ranked on every Retrieve.
        """
        cfg = self.config
        n = len(heads)

        def column(values: Iterable[float]) -> npt.NDArray[np.float64]:
            return np.fromiter(values, dtype=np.float64, count=n)

        hours = np.maximum(0.0, now - column(h.last_access for h in heads)) / 3600.0
        recency = np.exp(-cfg.recency_lambda * hours)
        importance = np.clip(column(h.importance for h in heads) / 10.0, 0.0, 1.0)
        activation = np.minimum(1.0, levels)
        base = (cfg.w_rel * relevance + cfg.w_rec * recency + cfg.w_imp * importance
                + cfg.w_act * activation)
        strength = np.clip(column(h.strength for h in heads), 0.0, 2.0)
        factor = (0.5 + 0.5 * strength) * (1.0 + cfg.valence_bias * column(h.valence for h in heads))
        if q.as_of is None:
            # Superseded facts stay findable at a discount unless a time is asked for.
            until = column(math.inf if h.valid_until is None else h.valid_until for h in heads)
            factor = np.where(until <= now, factor * cfg.superseded_factor, factor)
        return base * factor, (relevance, recency, importance, activation)


def _relevances(qvecs: npt.NDArray[np.float32], weights: Sequence[float],
                vectors: Sequence[npt.NDArray[np.float32]]) -> npt.NDArray[np.float64]:
    """Best weighted cosine between the query parts and each unit, clipped to [0, 1]."""
    if not vectors:
        return np.zeros(0, dtype=np.float64)
    sims = (qvecs @ np.stack(vectors).T).astype(np.float64)  # parts x units
    weighted = np.asarray(weights, dtype=np.float64)[:, None] * sims
    best: npt.NDArray[np.float64] = np.clip(weighted.max(axis=0), 0.0, 1.0)
    return best
