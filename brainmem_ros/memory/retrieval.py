"""Goal-directed retrieval: filtered hybrid recall, spreading activation, ranking.

The ranking (docs/retrieval.md has the derivation and the measurements):

- **evidence** of a candidate = ``w_vector * vector + w_lexical * lexical + w_entity * entity``
  (shares normalised to 1), each part in [0, 1] so that no list's raw scale (a cosine
  lives in 0.3-0.7, BM25 is unbounded) decides alone: the cosine relative to the best
  candidate, BM25 and entity weight relative to what the query's terms could give (the
  cosine of a query with a goal or a state blends its best part with the weighted mean
  over the parts, ``part_agreement``, so fitting both question and goal counts);
- **relevance** = evidence + ``w_act * max(0, activation - evidence)``: linked memories
  (the previous and next moments of the same episode, shared entities, causes, ...) pass
  on activation spread from the candidates' evidence, and lift a memory towards it;
- **score** = relevance x prior, where the prior multiplies bounded terms for recency,
  importance, learned strength and valence (their weights sum to at most 0.5,
  ``RetrievalConfig``), and by the facts of the query's entities (``fact_rank.fact_factors``):
  a memory stating a value that no longer holds steps back behind the one stating the
  current value. They reorder near-ties and lift a reinforced memory, but cannot bury a
  match with clearly more evidence;
- **typicality**: a candidate with many near-copies among the candidates that the query
  ranks about as high (a month of one routine it cannot tell apart) keeps
  ``1 / (1 + typicality x ln(1 + copies))`` of its score
  (:mod:`brainmem_ros.memory.typicality`), so such a family cannot outrank the one
  memory that says something different;
- **diversity**: among the best, a near-copy of a memory ranked above it steps back by
  ``diversity x redundancy`` (maximal marginal relevance), so a month of one routine
  sentence cannot fill the top k.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait

import numpy as np
import numpy.typing as npt

from brainmem_ros.encoders.base import Embedder, embed_query
from brainmem_ros.errors import StoreError
from brainmem_ros.memory.adjacency import Adjacency
from brainmem_ros.memory.config import RetrievalConfig
from brainmem_ros.memory.diversity import diversify
from brainmem_ros.memory.evidence import Candidates, EvidenceScale
from brainmem_ros.memory.fact_rank import fact_factors
from brainmem_ros.memory.fact_store import FactStore
from brainmem_ros.memory.graph import Activation, edge_pairs, spread
from brainmem_ros.memory.index import VectorIndex
from brainmem_ros.memory.query import (
    Query,
    entity_mentions,
    fts_expression,
    passes,
    per_request,
    same_text_key,
)
from brainmem_ros.memory.store import SqliteStore, UnitHead
from brainmem_ros.memory.text_recall import TextCandidates, text_candidates
from brainmem_ros.memory.types import Pose, ScoredMemory, ScoreParts
from brainmem_ros.memory.typicality import typicality

# Query and its text helpers moved to memory.query; importers of this module keep them.
__all__ = ['Candidates', 'Query', 'Retriever', 'entity_mentions', 'fts_expression', 'per_request']

# Threads that find lexical and entity candidates while queries are embedded: one per
# Retrieve under way (the node serves several at once), the rest wait their turn.
_TEXT_THREADS = 4
# An unfiltered vector search asks for this many more neighbours than it keeps:
# derived units (reflections) and marginalized ones are dropped afterwards.
_OVERSAMPLE = 1.25
# Beyond ``filter_select_limit`` matching units, a filtered vector search asks the index
# for this many times the candidates it needs and keeps those that pass.
_BROAD_FILTER_OVERSAMPLE = 8


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
        self._text_pool = ThreadPoolExecutor(max_workers=_TEXT_THREADS, thread_name_prefix='brainmem-recall')

    def close(self) -> None:
        """Let the threads of lexical and entity recall end (after the Retrieves under way)."""
        self._text_pool.shutdown(wait=True)

    # -- recall ----------------------------------------------------------------------

    def recall(self, q: Query, qvecs: npt.NDArray[np.float32], weights: Sequence[float],
               text: TextCandidates | Future[TextCandidates] | None = None) -> Candidates:
        """Filtered hybrid recall: vector, lexical and entity candidates with their evidence.

        ``text``: the lexical and entity candidates of ``q``, when already found or being
        found on another thread (waited for after the vector search, which needs them not).
        """
        cfg = self.config
        unit_filter = q.filter
        allowed: list[int] | None = None
        if unit_filter.narrows:
            allowed = self.store.filtered_ids(unit_filter, limit=cfg.filter_select_limit)
            if allowed is not None and not allowed:
                return Candidates({}, {}, {}, 0.0)
        cosine = self._vector_candidates(q, qvecs, weights, allowed)
        floor = min(cosine.values()) if len(cosine) >= per_request(cfg.vector_candidates, q) else 0.0
        if isinstance(text, Future):
            found = text.result()
        else:
            found = text if text is not None else text_candidates(self.store, cfg, q)
        lexical, window, ideal, entity = dict(found.lexical), found.window, found.ideal, found.entity
        if lexical:
            # Candidates of the other lists keep the words they match (as far as the matches
            # ranked reach): a memory close in meaning that shares the query's words has
            # both kinds of evidence, however many shorter memories hold those words too
            # and fill the lexical list.
            added = {uid: min(1.0, window[uid] / ideal) for uid in (*cosine, *entity)
                     if uid in window and uid not in lexical}
            for uid, keep in found.kept(added, self.store).items():
                added[uid] *= keep
            lexical.update(added)
        return Candidates(cosine, lexical, entity, floor)

    def _vector_candidates(self, q: Query, qvecs: npt.NDArray[np.float32], weights: Sequence[float],
                           allowed: list[int] | None) -> dict[int, float]:
        cfg = self.config
        n = per_request(cfg.vector_candidates, q)
        if allowed is not None and len(allowed) <= cfg.filter_exact_limit:
            # Few matching memories: compare the query with each of them exactly.
            vectors = self.store.vectors(allowed)
            if q.near is not None and q.radius is not None:
                vectors = self._within_radius(vectors, q.near, q.radius)
            if not vectors:
                return {}
            exact_ids = list(vectors)
            rel = _relevances(qvecs, weights, [vectors[i] for i in exact_ids], cfg.part_agreement)
            order = np.argsort(-rel)[:n]
            return {exact_ids[i]: float(rel[i]) for i in order}
        found = self._scan_marginalized(qvecs, weights, n) if q.include_marginalized else {}
        if not len(self.index):
            return found
        if allowed is not None:
            scores, ids = self.index.search_within(qvecs, n, np.asarray(allowed, dtype=np.int64))
        else:
            oversample = _BROAD_FILTER_OVERSAMPLE if q.filter.narrows else _OVERSAMPLE
            scores, ids = self.index.search(qvecs, int(n * oversample))
        best: dict[int, float] = {}
        for row, weight in enumerate(weights):
            for score, uid in zip(scores[row], ids[row], strict=True):
                if uid >= 0:
                    best[int(uid)] = max(best.get(int(uid), -1.0), weight * float(score))
        if len(weights) > 1 and cfg.part_agreement:
            # Each part's search knows only the cosines of its own neighbours: the others
            # come from the vectors (read once; the rerank reads the same ones from the cache).
            held = self.store.vectors(best)
            best = dict(zip(held, _relevances(qvecs, weights, list(held.values()),
                                              cfg.part_agreement).tolist(), strict=True))
        if allowed is None and q.filter.narrows:
            # A broad filter: the index holds every active unit, keep those it lets through.
            # (Without a filter, derived types are dropped with everything else after
            # spreading: a reflection that matches may still pass activation to its evidence.)
            heads = self.store.unit_heads(best, with_pose=q.near is not None)
            best = {uid: s for uid, s in best.items() if uid in heads and passes(heads[uid], q)}
        best.update(found)
        top = sorted(best, key=lambda i: -best[i])[:n]
        return {uid: best[uid] for uid in top}

    def _within_radius(self, vectors: dict[int, npt.NDArray[np.float32]], near: Pose, radius: float
                       ) -> dict[int, npt.NDArray[np.float32]]:
        heads = self.store.unit_heads(vectors, with_pose=True)
        return {uid: v for uid, v in vectors.items()
                if uid in heads and heads[uid].pose is not None
                and heads[uid].pose.distance(near) <= radius}  # type: ignore[union-attr]

    def _scan_marginalized(self, qvecs: npt.NDArray[np.float32], weights: Sequence[float],
                           width: int) -> dict[int, float]:
        # Marginalized units are out of the hot index by design; asking for them
        # explicitly pays a scan of their vectors in SQLite.
        best: dict[int, float] = {}
        for ids, vecs in self.store.iter_vectors(marginalized=True):
            sims = _combine((qvecs @ vecs.T).astype(np.float64), weights, self.config.part_agreement)
            order = np.argsort(-sims)[:width]
            best.update({int(ids[i]): float(sims[i]) for i in order})
        top = sorted(best, key=lambda i: -best[i])[:width]
        return {uid: best[uid] for uid in top}

    # -- ranking ---------------------------------------------------------------------

    def run(self, q: Query, *, now: float) -> list[ScoredMemory]:
        """Retrieve, rank and return the best ``q.top_k`` memories (no side effects)."""
        cfg = self.config
        weights = [w for _, w in q.parts]
        qvecs, scale, cosine, evidence = self._evidence(q)
        if not evidence:
            return []
        # Only candidates with a fair share of the best evidence spread: activation lifts a
        # memory towards what reaches it, so what weak seeds pass on changes no ranking.
        floor = cfg.spread_floor * max(evidence.values())
        activated = spread({u: e for u, e in evidence.items() if e >= floor}, self.neighbours,
                           hops=cfg.hops, decay=cfg.hop_decay, threshold=cfg.activation_threshold,
                           max_activated=per_request(cfg.max_activated, q))
        for uid in evidence.keys() - activated.keys():
            activated[uid] = Activation(evidence[uid], (uid,))
        heads = [h for h in self.store.unit_heads(activated, with_pose=q.near is not None).values()
                 if passes(h, q, seeded=h.id in evidence)]
        # One read of every head's vector serves the cosines still missing, typicality and
        # diversity (each read of a few hundred costs about half a millisecond).
        held = self.store.vectors(h.id for h in heads)
        heads = [h for h in heads if h.id in held]
        if not heads:
            return []
        # A marginalized memory is out of recall: reached through the graph, it counts for what
        # its links pass on, not for its own match to the query (which made marginalizing moot).
        hidden = {h.id for h in heads if h.marginalized and not q.include_marginalized}
        known = cosine.keys() | hidden  # once: as a set display in the filter it was rebuilt per head
        self._add_cosines(cosine, {h.id: held[h.id] for h in heads if h.id not in known},
                          qvecs, weights, cfg.part_agreement)
        cosine.update(dict.fromkeys(hidden, -math.inf))  # below any floor of the scale: no evidence
        # Memories that state an entity's value the query's entities no longer have (or,
        # with as_of, did not have then) step back; those stating the current one step up.
        facts = fact_factors(FactStore(self.store), [h.id for h in heads], q.entity_keys, as_of=q.as_of)
        scores, parts = self._scores(heads, scale, cosine, activated, facts, now=now)
        # A family of near-copies the query cannot tell apart counts for less than a memory
        # that stands out (memory/typicality.py).
        typical = typicality([held[h.id] for h in heads], scores, weight=cfg.typicality,
                             threshold=cfg.redundancy_cosine)
        scores = scores * (1.0 - typical)
        # Best score first, newer id first among equals; only the top k leave as units.
        order = np.lexsort((-np.fromiter((h.id for h in heads), dtype=np.int64, count=len(heads)),
                            -scores))
        order, scores, redundancy = diversify([h.id for h in heads], order, scores, q.top_k,
                                              diversity=cfg.diversity, threshold=cfg.redundancy_cosine,
                                              vectors=lambda ids: {i: held[i] for i in ids})
        results: list[ScoredMemory] = []
        seen: set[str] = set()
        # A month of routine logs the same sentence many times; the planner gains nothing
        # from ten copies, so a text already returned (the newest, best copy) is skipped.
        # Units are read (and their JSON decoded) a chunk at a time: the first holds just
        # a few more than top_k, since copies of a returned text are rare once near-copies
        # have stepped back.
        bounds = [0, q.top_k + 2]
        while bounds[-1] < len(order):
            bounds.append(bounds[-1] + 2 * q.top_k)
        for start, end in itertools.pairwise(bounds):
            chunk = order[start:end]
            units = self.store.get_units(heads[i].id for i in chunk)
            for i in chunk:
                unit = units.get(heads[i].id)
                if unit is None or (key := same_text_key(unit.text)) in seen:
                    continue
                seen.add(key)
                terms = (*parts, typical, redundancy)
                results.append(ScoredMemory(unit=unit, score=float(scores[i]),
                                            parts=ScoreParts(*(float(p[i]) for p in terms)),
                                            path=_path(activated[heads[i].id], heads[i].id)))
                if len(results) == q.top_k:
                    return results
        return results

    def seeds(self, q: Query) -> dict[int, float]:
        """The evidence of each recalled candidate: where spreading activation starts."""
        return self._evidence(q)[3]

    def _evidence(self, q: Query
                  ) -> tuple[npt.NDArray[np.float32], EvidenceScale, dict[int, float], dict[int, float]]:
        """Query vectors, the evidence scale, cosines and the evidence of every candidate."""
        texts = [t for t, _ in q.parts]
        weights = [w for _, w in q.parts]
        # The words' and entities' candidates need no vectors: found on a thread of the
        # retriever while the encoder embeds the query (both release the interpreter).
        try:
            text = self._text_pool.submit(text_candidates, self.store, self.config, q)
        except RuntimeError:
            # Only a shut-down pool refuses work: the memory was closed (under way when
            # this Retrieve began, or before it).
            msg = 'memory store is closed'
            raise StoreError(msg) from None
        try:
            qvecs = embed_query(self.embedder, texts)
        except BaseException:
            # The encoder's error is the one to report; the thread still ends its reads
            # before the caller may close the store.
            wait([text])
            raise
        try:
            # At 100k units and more the words' search takes longer than the encoder: the
            # vector search runs meanwhile, and recall waits for the words after it.
            found = self.recall(q, qvecs, weights, text)
        except BaseException:
            wait([text])
            raise
        text.result()  # ends the thread's reads and reports its error if recall asked for none
        seed_ids = found.ids
        cosine = dict(found.cosine)
        self._add_cosines(cosine, self.store.vectors(i for i in seed_ids if i not in cosine), qvecs, weights,
                          self.config.part_agreement)
        scale = EvidenceScale(cosine, found, self.config)
        evidence = {uid: scale.evidence(uid, cosine.get(uid, 0.0)) for uid in seed_ids}
        return qvecs, scale, cosine, evidence

    @staticmethod
    def _add_cosines(cosine: dict[int, float], vectors: Mapping[int, npt.NDArray[np.float32]],
                     qvecs: npt.NDArray[np.float32], weights: Sequence[float], agreement: float) -> None:
        """Add to ``cosine`` the vector relevance of each of ``vectors`` (unit id: vector)."""
        if vectors:
            cosine.update(zip(vectors, _relevances(qvecs, weights, list(vectors.values()),
                                                   agreement).tolist(), strict=True))

    def neighbours(self, ids: Sequence[int]) -> Mapping[int, Sequence[tuple[int, float]]]:
        """The strongest ``fanout`` edges of each unit, as (other unit, weight): what activation
        spreads along."""
        if self.adjacency is not None:
            # Answers from SQLite itself when fanout was raised beyond what it holds.
            return self.adjacency.neighbour_weights(ids, fanout=self.config.fanout)
        return edge_pairs(self.store.edges_of(ids, fanout=self.config.fanout))

    def _scores(self, heads: Sequence[UnitHead], scale: EvidenceScale, cosine: Mapping[int, float],
                activated: Mapping[int, Activation], facts: Mapping[int, float], *, now: float
                ) -> tuple[npt.NDArray[np.float64], tuple[npt.NDArray[np.float64], ...]]:
        """Scores of ``heads`` and their :class:`ScoreParts`, one array operation per term."""
        cfg = self.config
        n = len(heads)

        def column(values: Iterable[float]) -> npt.NDArray[np.float64]:
            return np.fromiter(values, dtype=np.float64, count=n)

        vector = scale.vectors(column(cosine[h.id] for h in heads))
        lexical = column(scale.lexical(h.id) for h in heads)
        entity = column(scale.entity(h.id) for h in heads)
        evidence = scale.w_vector * vector + scale.w_lexical * lexical + scale.w_entity * entity
        activation = np.minimum(1.0, column(activated[h.id].received for h in heads))
        # Linked memories lift a memory towards what they pass on, never above it: a memory
        # the query does not describe rises next to a strong match (the answer in the
        # turn after the question), while a cluster of similar memories (a month of the
        # same routine) cannot lift each other over a better match.
        relevance = evidence + cfg.w_act * np.maximum(0.0, activation - evidence)
        hours = np.maximum(0.0, now - column(h.last_access for h in heads)) / 3600.0
        recency = np.exp(-cfg.recency_lambda * hours)
        importance = np.clip(column(h.importance for h in heads) / 10.0, 0.0, 1.0)
        strength = np.clip(column(h.strength for h in heads), 0.0, 2.0)
        valence = np.clip(column(h.valence for h in heads), -1.0, 1.0)
        prior = ((1.0 + cfg.prior_recency * (2.0 * recency - 1.0))
                 * (1.0 + cfg.prior_importance * (2.0 * importance - 1.0))
                 * (1.0 + cfg.prior_strength * (strength - 1.0))
                 * (1.0 + cfg.prior_valence * valence))
        # fact_factors says which way (and, for several entities, how often); the prior
        # bounds how far: +-prior_facts per entity at most.
        fact = np.clip(column(facts.get(h.id, 1.0) for h in heads), 0.5, 2.0)
        prior = prior * np.exp(cfg.prior_facts * np.log(fact) / np.log(1.25))
        return (relevance * prior,
                (relevance, recency, importance, activation, vector, lexical, entity, prior))


def _path(activation: Activation, uid: int) -> tuple[int, ...]:
    return activation.path if activation.path and activation.path[-1] == uid else (uid,)


def _relevances(qvecs: npt.NDArray[np.float32], weights: Sequence[float],
                vectors: Sequence[npt.NDArray[np.float32]], agreement: float) -> npt.NDArray[np.float64]:
    """The vector relevance of each unit to the query's parts, in [0, 1] (:func:`_combine`)."""
    if not vectors:
        return np.zeros(0, dtype=np.float64)
    return _combine((qvecs @ np.stack(vectors).T).astype(np.float64), weights, agreement)


def _combine(sims: npt.NDArray[np.float64], weights: Sequence[float], agreement: float
             ) -> npt.NDArray[np.float64]:
    """Weighted cosines of the parts (parts x units) as one relevance per unit, clipped to [0, 1].

    The best part alone would make a memory that matches the question well and the goal
    not at all the equal of one that matches both; ``agreement`` is the share taken from
    the weighted mean over the parts instead, so the second wins a near-tie. With one
    part both are the same.
    """
    w = np.asarray(weights, dtype=np.float64)
    weighted = w[:, None] * sims
    best = weighted.max(axis=0)
    if agreement and len(w) > 1:
        best = (1.0 - agreement) * best + agreement * weighted.sum(axis=0) / w.sum()
    out: npt.NDArray[np.float64] = np.clip(best, 0.0, 1.0)
    return out
