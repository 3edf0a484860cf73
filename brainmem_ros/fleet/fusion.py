"""Fleet recall ranked like local recall, and merged with the robot's own results.

Pure functions over values. A fleet candidate's relevance is the same weighted sum
as locally (docs/retrieval.md): cosine put on [0, 1] relative to the best candidate
(over at least ``vector_span`` of cosine), full-text rank relative to the best text
match, then the same bounded priors (recency of the owner's last change, importance,
strength, valence). The two lists are each normalised to their own best candidate,
so before merging each side is weighed by how good its best match is against the
other side's: ``0.5 + 0.5 x`` where ``x`` places that side's best cosine on the shared
scale. A clearly better local match is never buried by a mediocre fleet one, and a
fleet memory that answers the query well rises above weak local ones.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from brainmem_ros.fleet.pg_store import FleetHit
from brainmem_ros.memory.config import RetrievalConfig
from brainmem_ros.memory.facts import STALE_FACTOR
from brainmem_ros.memory.types import (
    Entity,
    MemoryUnit,
    Outcome,
    Pose,
    ScoredMemory,
    ScoreParts,
    StateChange,
    UnitType,
)


@dataclass(frozen=True)
class RecallResult:
    """One recalled memory and where it comes from."""

    memory: ScoredMemory
    robot_id: str  # '' for this robot's own memory
    shared_at: float  # when its owner last sent it (POSIX seconds; 0 for own memories)
    cached: bool = False  # True: from the local fleet cache (the server was not reached)


@dataclass(frozen=True)
class Recall:
    """What a Retrieve with a scope answers."""

    results: list[RecallResult]
    scope: str  # 'local' | 'fleet'
    fleet_reached: bool  # False: the fleet could not be asked, results are local only
    note: str  # '' or why the fleet part is missing
    cached: bool = False  # True: the fleet part comes from the local cache


def _unit(hit: FleetHit) -> MemoryUnit:
    entities = tuple(Entity(str(e[0]), str(e[1]), tuple((str(k), str(v)) for k, v in e[2]))
                     for e in _json(hit.entities))
    changes = tuple(StateChange(*map(str, c)) for c in _json(hit.state_changes))
    pose_value = _json(hit.pose) if hit.pose is not None else None
    pose = Pose(*pose_value) if pose_value else None
    try:
        outcome = Outcome(hit.outcome)
    except ValueError:
        outcome = Outcome.UNKNOWN
    return MemoryUnit(id=hit.unit_id, stamp=hit.stamp, text=hit.text, type=UnitType.parse(hit.type),
                      episode_id=hit.episode_id, source=hit.source, entities=entities,
                      state_changes=changes, outcome=outcome, valence=hit.valence,
                      importance=hit.importance, strength=hit.strength, last_access=hit.updated,
                      marginalized=hit.marginalized, pose=pose, valid_from=hit.stamp)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def rank_fleet(hits: Sequence[FleetHit], cfg: RetrievalConfig, *, now: float,
               best_cosine: float | None = None, lexical: Sequence[float] | None = None
               ) -> list[tuple[FleetHit, ScoreParts, float]]:
    """Fleet candidates scored like local ones, best first.

    ``lexical``: each hit's lexical evidence on the local scale (the IDF of the query
    terms it holds, by the robot's own document counts, over the query's ideal), when
    the robot could weigh them; otherwise the server's text rank relative to the best.
    """
    if not hits:
        return []
    best = max(best_cosine if best_cosine is not None else -1.0, max(h.cosine for h in hits))
    floor = min(min(h.cosine for h in hits), best - cfg.vector_span)
    best_lex = max(h.lexical for h in hits)
    if lexical is None:
        lexical = [h.lexical / best_lex if best_lex > 0 else 0.0 for h in hits]
    w_v, w_l = cfg.w_vector, cfg.w_lexical
    if max(lexical) <= 0:
        w_v, w_l = 1.0, 0.0
    total = (w_v + w_l) or 1.0
    out: list[tuple[FleetHit, ScoreParts, float]] = []
    for h, lex in zip(hits, lexical, strict=True):
        vector = min(1.0, max(0.0, (h.cosine - floor) / max(best - floor, 1e-9)))
        lexical_part = lex
        relevance = (w_v * vector + w_l * lexical_part) / total
        recency = math.exp(-cfg.recency_lambda * max(0.0, now - h.updated) / 3600.0)
        importance = min(1.0, max(0.0, h.importance / 10.0))
        strength = min(2.0, max(0.0, h.strength))
        valence = min(1.0, max(-1.0, h.valence))
        prior = ((1.0 + cfg.prior_recency * (2.0 * recency - 1.0))
                 * (1.0 + cfg.prior_importance * (2.0 * importance - 1.0))
                 * (1.0 + cfg.prior_strength * (strength - 1.0))
                 * (1.0 + cfg.prior_valence * valence))
        if h.superseded_at is not None and h.superseded_at <= now:
            # As locally (fact_rank.fact_factors, retrieval): a memory stating what no longer
            # holds steps back once, by the factor of a local memory whose fact is stale.
            prior *= math.exp(cfg.prior_facts * math.log(STALE_FACTOR) / math.log(1.25))
        parts = ScoreParts(relevance=relevance, recency=recency, importance=importance, activation=0.0,
                           vector=vector, lexical=lexical_part, prior=prior)
        out.append((h, parts, relevance * prior))
    out.sort(key=lambda t: -t[2])
    return out


def merge(local: Sequence[ScoredMemory], local_best_cosine: float | None, fleet: Sequence[FleetHit],
          cfg: RetrievalConfig, *, top_k: int, now: float, cached: bool = False,
          lexical: Sequence[float] | None = None) -> list[RecallResult]:
    """The robot's own results and the fleet's, on one scale, best ``top_k`` first."""
    fleet_best = max((h.cosine for h in fleet), default=None)
    ranked = rank_fleet(fleet, cfg, now=now, lexical=lexical)
    local_weight = fleet_weight = 1.0
    if local and fleet_best is not None and local_best_cosine is not None:
        ref = max(local_best_cosine, fleet_best)
        floor = ref - cfg.vector_span

        def weight(best: float) -> float:
            return 0.5 + 0.5 * min(1.0, max(0.0, (best - floor) / max(ref - floor, 1e-9)))

        local_weight, fleet_weight = weight(local_best_cosine), weight(fleet_best)
    merged = [RecallResult(ScoredMemory(m.unit, m.score * local_weight, m.parts, m.path), '', 0.0)
              for m in local]
    merged += [RecallResult(ScoredMemory(_unit(h), score * fleet_weight, parts, (h.unit_id,)),
                            h.robot_id, h.updated, cached) for h, parts, score in ranked]
    merged.sort(key=lambda r: -r.memory.score)
    return merged[:top_k]
