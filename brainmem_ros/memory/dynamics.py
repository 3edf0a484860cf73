"""How memories change after they are stored: reward, decay, marginalization."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from brainmem_ros.memory.config import DynamicsConfig
from brainmem_ros.memory.index import VectorIndex
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import EdgeKind, MemoryUnit

MAX_STRENGTH = 2.0
# Edges that record structure rather than association never decay or get pruned.
_STRUCTURAL = (EdgeKind.SUPERSEDES.value, EdgeKind.EVIDENCE.value)


@dataclass(frozen=True)
class ConsolidationReport:
    """What one consolidation cycle changed."""

    decayed: int
    marginalized: tuple[int, ...]
    pruned_edges: int
    replayed: tuple[int, ...]


def reinforce(store: SqliteStore, units: Sequence[MemoryUnit], reward: float, *, note: str,
              now: float, config: DynamicsConfig) -> list[int]:
    """Move strength and valence of ``units`` by ``reward``; Hebbian co-use edges between them.

    Returns the ids that were marginalized and are strong enough again to be restored.
    """
    restore: list[int] = []
    with store.atomic() as db:
        for unit in units:
            s = unit.strength
            if reward >= 0:
                s += config.reward_rate * reward * (MAX_STRENGTH - s)
            else:
                s += config.reward_rate * reward * s
            valence = unit.valence + config.valence_rate * abs(reward) * (math.copysign(1.0, reward)
                                                                          - unit.valence)
            valence = max(-1.0, min(1.0, valence)) if reward else unit.valence
            store.set_fields(unit.id, strength=s, valence=valence, last_access=now)
            if unit.marginalized and s >= config.marginalize_below and reward > 0:
                restore.append(unit.id)
        ids = sorted({u.id for u in units})[:16]  # bound the pairs: 16 units -> 120 edges
        for a, b in itertools.combinations(ids, 2):
            if reward > 0:
                store.strengthen_edge(a, b, EdgeKind.CO_USE, config.hebbian_rate * reward)
            elif reward < 0:
                db.execute('UPDATE edges SET weight = weight * ? WHERE src = ? AND dst = ? AND kind = ?',
                           (1.0 + config.hebbian_rate * reward, a, b, EdgeKind.CO_USE.value))
        db.execute('INSERT INTO reinforcements(stamp, unit_ids, reward, note) VALUES (?, ?, ?, ?)',
                   (now, ','.join(str(u.id) for u in units), reward, note[:1000]))
    return restore


def consolidate(store: SqliteStore, index: VectorIndex, *, now: float,
                config: DynamicsConfig) -> ConsolidationReport:
    """One deterministic cycle: decay, fold access, marginalize, decay/prune edges, replay."""
    with store.atomic() as db:
        last = store.get_meta('last_consolidation')
        if last:
            since = float(last)
        else:
            row = store.query('SELECT MIN(stamp) FROM units')[0][0]
            since = float(row) if row is not None else now
        days = max(0.0, now - since) / 86400.0
        factor = math.exp(-config.decay_per_day * days)
        decayed = db.execute(
            'UPDATE units SET strength = MIN(?, strength * ? + ? * (access_count - folded_access)), '
            'folded_access = access_count WHERE protected = 0',
            (MAX_STRENGTH, factor, config.access_gain)).rowcount
        weak = [r[0] for r in db.execute(
            'SELECT id FROM units WHERE protected = 0 AND marginalized = 0 AND strength < ?',
            (config.marginalize_below,)).fetchall()]
        if weak:
            db.executemany('UPDATE units SET marginalized = 1 WHERE id = ?', [(i,) for i in weak])
            store.bump_generation()
        edge_factor = math.exp(-config.edge_decay_per_day * days)
        # Wholesale: edge listeners (the in-memory graph) are told that all edges
        # changed instead of being told row by row.
        with store.rewriting_edges() as edges_db:
            if edge_factor != 1.0:  # x 1.0 would rewrite every edge for nothing
                edges_db.execute(f'UPDATE edges SET weight = weight * ? WHERE kind NOT IN {_STRUCTURAL}',
                                 (edge_factor,))
            pruned = edges_db.execute(f'DELETE FROM edges WHERE weight < ? AND kind NOT IN {_STRUCTURAL}',
                                      (config.prune_below,)).rowcount
        replayed: list[int] = []
        if config.replay_count:
            # Rehearse mid-strength units that many others point at: the ones most
            # worth keeping before they fade.
            rows = db.execute(
                'SELECT u.id FROM units u JOIN edges e ON e.src = u.id OR e.dst = u.id '
                'WHERE u.marginalized = 0 AND u.protected = 0 AND u.strength BETWEEN ? AND ? '
                'GROUP BY u.id ORDER BY COUNT(*) DESC, u.id LIMIT ?',
                (config.marginalize_below * 2, 1.0, config.replay_count)).fetchall()
            replayed = [r[0] for r in rows]
            db.executemany('UPDATE units SET strength = MIN(?, strength + ?) WHERE id = ?',
                           [(MAX_STRENGTH, config.access_gain * 5, i) for i in replayed])
        store.set_meta('last_consolidation', repr(now))
    if weak:
        index.remove(np.asarray(weak, dtype=np.int64))
    return ConsolidationReport(decayed=decayed, marginalized=tuple(weak), pruned_edges=pruned,
                               replayed=tuple(replayed))

