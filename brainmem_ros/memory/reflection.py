"""Reflection: turn a pile of important experience into higher-level insight units.

:func:`due_units` picks the window, :func:`plan` turns it into insights; the memory
stores them (one transaction) and links each to its evidence (:func:`evidence_edges`).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from brainmem_ros.encoders.base import Insight, Reasoner
from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.config import DynamicsConfig
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import Edge, EdgeKind, MemoryUnit, ObservationInput, Outcome, UnitType

_MAX_INSIGHTS = 3
_EVIDENCE_WEIGHT = 0.7
_LAST_KEY = 'last_reflection_id'


class PlannedInsight(NamedTuple):
    """An insight unit to store, and the units it was drawn from."""

    item: ObservationInput
    evidence: tuple[MemoryUnit, ...]


def summarise(units: list[MemoryUnit]) -> list[Insight]:
    """Deterministic insights without an LLM: recurring entities and their outcomes."""
    counts = Counter(e.key for u in units for e in u.entities if e.key)
    insights: list[Insight] = []
    for key, n in counts.most_common():
        if n < 3 or len(insights) >= _MAX_INSIGHTS:
            break
        idx = [i for i, u in enumerate(units) if key in {e.key for e in u.entities}]
        failed = sum(units[i].outcome is Outcome.FAILURE for i in idx)
        worked = sum(units[i].outcome is Outcome.SUCCESS for i in idx)
        latest = units[idx[-1]].text
        insights.append(Insight(
            f'{n} recent memories involve the {key}: {worked} went well, {failed} failed. '
            f'Latest: "{latest}"', tuple(idx)))
    failures = [i for i, u in enumerate(units) if u.outcome is Outcome.FAILURE]
    if len(failures) >= 2 and len(insights) < _MAX_INSIGHTS:
        what = '; '.join(f'"{units[i].text}"' for i in failures[-3:])
        insights.append(Insight(f'{len(failures)} recent attempts failed: {what}', tuple(failures)))
    return insights


def due_units(store: SqliteStore, config: DynamicsConfig, *, force: bool = False) -> list[MemoryUnit]:
    """The window of units to reflect on, once the importance since the last reflection passes
    the threshold (or ``force``); [] otherwise. Marks them reflected on.

    The caller holds the memory's lock: the check and the mark are one step.
    """
    last = int(store.get_meta(_LAST_KEY, '0'))
    # Every Store asks this, so it is one aggregate over the primary key range;
    # the ids themselves are read only when a reflection is due.
    newest, total = store.importance_since(last, skip_type=UnitType.REFLECTION.value)
    if newest is None or (total < config.reflect_threshold and not force):
        return []
    store.set_meta(_LAST_KEY, str(newest))
    window = store.newest_ids(last, newest, skip_type=UnitType.REFLECTION.value,
                              limit=config.reflect_window)
    units_by_id = store.get_units(window)
    return [units_by_id[i] for i in window if i in units_by_id]


def plan(units: list[MemoryUnit], reasoner: Reasoner | None, *, now: float,
         max_text_bytes: int) -> list[PlannedInsight]:
    """The insight units to store for ``units``, each with its evidence.

    The reasoner (an LLM) is asked first; when it fails or finds nothing, the
    deterministic :func:`summarise` answers.
    """
    insights: list[Insight] = []
    if reasoner is not None:
        try:
            insights = reasoner.reflect([u.text for u in units])
        except BrainMemError:
            insights = []  # the LLM failed: fall back to the deterministic summary below
    if not insights:
        insights = summarise(units)
    chosen: list[PlannedInsight] = []
    for insight in insights[:_MAX_INSIGHTS]:
        evidence = [units[i] for i in insight.evidence if 0 <= i < len(units)]
        if not evidence or not insight.text.strip():
            continue
        importance = min(10.0, sum(u.importance for u in evidence) / len(evidence) + 2.0)
        # As good or as bad as what it was drawn from (its text tallies outcomes, see intake).
        valence = max(-1.0, min(1.0, sum(u.valence for u in evidence) / len(evidence)))
        chosen.append(PlannedInsight(
            ObservationInput(insight.text[:max_text_bytes // 2], stamp=now, type=UnitType.REFLECTION,
                             source='reflection', importance=importance, valence=valence),
            tuple(evidence)))
    return chosen


def evidence_edges(insight_id: int, planned: PlannedInsight) -> list[Edge]:
    """The links from a stored insight to its evidence."""
    return [Edge(insight_id, u.id, EdgeKind.EVIDENCE, _EVIDENCE_WEIGHT) for u in planned.evidence]
