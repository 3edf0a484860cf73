"""The rules of a Store before anything is written: the draft unit and near-duplicates."""

from __future__ import annotations

import re
from collections.abc import Callable

from brainmem_ros.encoders.base import Extractor
from brainmem_ros.memory.config import DynamicsConfig
from brainmem_ros.memory.entity_names import speaker
from brainmem_ros.memory.graph import Neighbours
from brainmem_ros.memory.requests import CheckedObservation
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import Enrichment, Entity, MemoryUnit, Outcome, Pose, UnitType

_NUMBER = re.compile(r'\d+(?:\.\d+)?')
#: Near-duplicates are looked for among the few nearest memories only.
DEDUP_K = 3


def heuristic_importance(outcome: Outcome, n_entities: int) -> float:
    """Importance without an LLM rating: failures teach the most, then successes, then
    scenes with many things in them."""
    base = {Outcome.FAILURE: 7.0, Outcome.SUCCESS: 6.0, Outcome.UNKNOWN: 4.0}[outcome]
    return min(10.0, base + min(n_entities, 4) * 0.5)


def draft_unit(obs: CheckedObservation, pose: Pose | None, extractor: Extractor, *,
               clock: Callable[[], float], enrich: bool) -> MemoryUnit:
    """The (not yet stored, id 0) unit for a validated observation: extraction merged with
    what the caller gave."""
    when = clock() if obs.stamp is None else obs.stamp
    extraction = extractor.extract(obs.text, known_entities=[e.name for e in obs.entities])
    merged: dict[str, Entity] = {e.key: e for e in extraction.entities}
    for e in obs.entities:
        merged.setdefault(e.key, e)
    # A reflection counts the outcomes of its evidence ("3 went well, 0 failed"): its outcome
    # words are tallies, not something that happened, so it states no outcome of its own.
    derived = obs.type is UnitType.REFLECTION
    outcome = Outcome.UNKNOWN if derived else extraction.outcome
    unit_valence = obs.valence if obs.valence is not None else (0.0 if derived else extraction.valence or 0.0)
    unit_importance = obs.importance if obs.importance is not None else (
        extraction.importance or heuristic_importance(outcome, len(merged)))
    return MemoryUnit(
        id=0, stamp=when, text=obs.text, type=obs.type, episode_id=obs.episode_id, source=obs.source,
        entities=tuple(merged.values()),
        actions=tuple(dict.fromkeys([*extraction.actions, *obs.actions])),
        state_changes=extraction.state_changes, outcome=outcome,
        valence=float(unit_valence), importance=float(unit_importance), last_access=when,
        pose=pose, valid_from=when, enrichment=Enrichment.PENDING if enrich else Enrichment.NONE)


def find_repeat(store: SqliteStore, unit: MemoryUnit, nearest: Neighbours | None,
                config: DynamicsConfig) -> MemoryUnit | None:
    """The stored unit ``unit`` repeats (same episode, type, time, place and numbers; for a
    speaker's words, also nothing said in between), if any."""
    if nearest is None:
        return None
    scores, ids = nearest
    close = [int(i) for s, i in zip(scores[:DEDUP_K], ids[:DEDUP_K], strict=True)
             if i >= 0 and s >= config.dedup_cosine]
    for other in store.get_units(close).values():
        if other.episode_id != unit.episode_id or other.type != unit.type:
            continue
        if abs(other.stamp - unit.stamp) > config.dedup_window_s:
            continue
        if unit.pose is not None and other.pose is not None and \
                unit.pose.distance(other.pose) > config.dedup_radius:
            continue
        if (unit.pose is None) != (other.pose is None):
            continue
        # Numbers name things (room 214, cup 3, message 7): never fold them together.
        if _NUMBER.findall(unit.text) != _NUMBER.findall(other.text):
            continue
        if speaker(unit.text) and unit.episode_id and not _last_said(store, unit, other):
            continue  # "Ana: Yes." to a new question is a new answer, not the last one again
        return other
    return None


def _last_said(store: SqliteStore, unit: MemoryUnit, other: MemoryUnit) -> bool:
    """``other`` is the episode's latest unit before ``unit``: a speaker repeating the words
    just said, with nothing said in between (a caption repeated as the camera sees the same
    scene folds whatever came between)."""
    latest = store.episode_before(unit.episode_id, unit.stamp, since=other.stamp, limit=1)
    return bool(latest) and latest[0][0] == other.id
