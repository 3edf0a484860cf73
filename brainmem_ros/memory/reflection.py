"""Reflection: turn a pile of important experience into higher-level insight units."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from brainmem_ros.encoders.base import Insight
from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.types import Edge, EdgeKind, MemoryUnit, ObservationInput, Outcome, UnitType

if TYPE_CHECKING:
    from brainmem_ros.memory.brainmem import BrainMem

_MAX_INSIGHTS = 3


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


def reflect(mem: BrainMem, *, now: float, force: bool = False) -> list[MemoryUnit]:
    """Reflect when the importance since the last reflection passes the threshold."""
    cfg = mem.config.dynamics
    db = mem.store_db
    with mem._lock:
        last = int(db.get_meta('last_reflection_id', '0'))
        # Every Store asks this, so it is one aggregate over the primary key range;
        # the ids themselves are read only when a reflection is due.
        newest, total = db.query('SELECT max(id), total(importance) FROM units WHERE id > ? AND type != ?',
                                 (last, UnitType.REFLECTION.value))[0]
        if newest is None or (total < cfg.reflect_threshold and not force):
            return []
        db.set_meta('last_reflection_id', str(newest))
        rows = db.query('SELECT id FROM units WHERE id > ? AND id <= ? AND type != ? '
                        'ORDER BY id DESC LIMIT ?',
                        (last, newest, UnitType.REFLECTION.value, cfg.reflect_window))
    window = [r[0] for r in reversed(rows)]
    units_by_id = db.get_units(window)
    units = [units_by_id[i] for i in window if i in units_by_id]
    insights: list[Insight] = []
    if mem.reasoner is not None:
        try:
            insights = mem.reasoner.reflect([u.text for u in units])
        except BrainMemError:
            insights = []  # the LLM failed: fall back to the deterministic summary below
    if not insights:
        insights = summarise(units)
    chosen: list[tuple[ObservationInput, list[MemoryUnit]]] = []
    for insight in insights[:_MAX_INSIGHTS]:
        evidence = [units[i] for i in insight.evidence if 0 <= i < len(units)]
        if not evidence or not insight.text.strip():
            continue
        importance = min(10.0, sum(u.importance for u in evidence) / len(evidence) + 2.0)
        chosen.append((ObservationInput(insight.text[:mem.config.store.max_text_bytes // 2], stamp=now,
                                        type=UnitType.REFLECTION, source='reflection',
                                        importance=importance), evidence))
    if not chosen:
        return []
    # One transaction for the insights and one for their evidence links (not one each):
    # reflection runs on the Store path, every ~30 observations of a busy robot.
    results = mem.store_many([item for item, _ in chosen])
    created: list[MemoryUnit] = []
    edges: list[Edge] = []
    for (_, evidence), result in zip(chosen, results, strict=True):
        if isinstance(result, BrainMemError):
            raise result
        edges += [Edge(result.unit.id, u.id, EdgeKind.EVIDENCE, 0.7) for u in evidence]
        created.append(result.unit)
    db.add_edges(edges)
    return created
