"""How memories change after they are stored: reward, decay, marginalization."""

from __future__ import annotations

import itertools
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from brainmem_ros.memory.config import DynamicsConfig
from brainmem_ros.memory.index import VectorIndex
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import EdgeKind, MemoryUnit

_log = logging.getLogger(__name__)
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


@dataclass(frozen=True)
class Cycle:
    """One consolidation cycle's clock readings, recorded so a crash can resume it.

    ``last`` is the previous cycle's time (None before the first one), ``seen`` the
    highest unit id that cycle decayed, ``top`` the highest id this one decays and
    ``done`` how far it got. Units up to ``seen`` decay for ``now - last``; newer
    ones from their own stamp, clamped into ``[last, now]``, so a stamp far in the
    past costs its own unit at most the time since the last cycle, never the others.
    """

    now: float
    last: float | None
    seen: int
    top: int
    done: int
    resumed: bool = False


_CYCLE_KEY = 'consolidation_cycle'
# Units decayed per transaction: the memory's lock is free between chunks, so
# Store and Retrieve wait at most one chunk (5,000 rows: ~25 ms here).
DECAY_CHUNK = 5000
# Pause between chunks: Python's locks are not fair, and a cycle that re-takes the
# lock at once starves the requests waiting for it (measured: a Retrieve waited
# for the whole 0.5 s cycle of a 100k store without it).
CHUNK_PAUSE_S = 0.002
# Edges are rewritten only when their pending decay has reached this factor: an
# hourly cycle would otherwise rewrite every association edge (23M rows at 1M
# units) for a 0.04% change.
_EDGE_REWRITE_BELOW = 0.99
# One cycle prunes at most this share of the association edges (weakest first):
# a clock jump or a misconfigured rate thins the graph, it never wipes it at once.
MAX_PRUNE_FRACTION = 0.1


def begin_cycle(store: SqliteStore, *, now: float) -> Cycle:
    """Start a cycle at ``now``, or resume the one a crash interrupted."""
    pending = store.get_meta(_CYCLE_KEY)
    if pending:
        c = json.loads(pending)
        return Cycle(now=float(c['now']), last=c['last'], seen=int(c['seen']), top=int(c['top']),
                     done=int(c['done']), resumed=True)
    last_raw = store.get_meta('last_consolidation')
    last = float(last_raw) if last_raw else None
    top = store.max_id()
    # A store consolidated before per-unit clocks: every unit was there at that cycle.
    seen = int(store.get_meta('consolidated_max_id', str(top) if last is not None else '0'))
    if last is not None and now < last:
        _log.warning('consolidation clock went back from %.3f to %.3f (use_sim_time changed?): '
                     'no decay this cycle', last, now)
        last = now
    cycle = Cycle(now=now, last=last, seen=seen, top=top, done=0)
    _save_cycle(store, cycle)
    return cycle


def _save_cycle(store: SqliteStore, cycle: Cycle) -> None:
    store.set_meta(_CYCLE_KEY, json.dumps({'now': cycle.now, 'last': cycle.last, 'seen': cycle.seen,
                                           'top': cycle.top, 'done': cycle.done}))


def decay_chunk(store: SqliteStore, index: VectorIndex, cycle: Cycle, *,
                config: DynamicsConfig) -> tuple[Cycle, int, list[int]] | None:
    """Decay, fold access into and marginalize the next chunk of units; None when done."""
    if cycle.done >= cycle.top:
        return None
    lo, hi = cycle.done, min(cycle.top, cycle.done + DECAY_CHUNK)
    rate = config.decay_per_day / 86400.0
    fold = ('strength = MIN(?, strength * ? + ? * (access_count - folded_access)), '
            'folded_access = access_count')
    with store.atomic() as db:
        decayed = 0
        old_hi = min(hi, cycle.seen)
        if old_hi > lo:
            elapsed = 0.0 if cycle.last is None else max(0.0, cycle.now - cycle.last)
            decayed += db.execute(
                f'UPDATE units SET {fold} WHERE protected = 0 AND id > ? AND id <= ?',
                (MAX_STRENGTH, math.exp(-rate * elapsed), config.access_gain, lo, old_hi)).rowcount
        new_lo = max(lo, cycle.seen)
        if hi > new_lo:
            floor = -math.inf if cycle.last is None else cycle.last
            rows = db.execute('SELECT id, stamp FROM units WHERE protected = 0 AND id > ? AND id <= ?',
                              (new_lo, hi)).fetchall()
            db.executemany(f'UPDATE units SET {fold} WHERE id = ?', [
                (MAX_STRENGTH, math.exp(-rate * (cycle.now - min(max(stamp, floor), cycle.now))),
                 config.access_gain, uid) for uid, stamp in rows])
            decayed += len(rows)
        weak = [r[0] for r in db.execute(
            'SELECT id FROM units WHERE protected = 0 AND marginalized = 0 AND strength < ? '
            'AND id > ? AND id <= ?', (config.marginalize_below, lo, hi)).fetchall()]
        if weak:
            db.executemany('UPDATE units SET marginalized = 1 WHERE id = ?', [(i,) for i in weak])
            store.bump_generation()
        cycle = replace(cycle, done=hi)
        _save_cycle(store, cycle)
    if weak:
        index.remove(np.asarray(weak, dtype=np.int64))
    return cycle, decayed, weak


def finish_cycle(store: SqliteStore, cycle: Cycle, *, config: DynamicsConfig) -> tuple[int, list[int]]:
    """Decay and prune edges, replay, record the cycle: (pruned edges, replayed ids)."""
    with store.atomic() as db:
        elapsed_days = 0.0 if cycle.last is None else max(0.0, cycle.now - cycle.last) / 86400.0
        pending = float(store.get_meta('edge_decay_pending', '1.0'))
        pending *= math.exp(-config.edge_decay_per_day * elapsed_days)
        pruned = 0
        if pending < _EDGE_REWRITE_BELOW:
            # Wholesale: edge listeners (the in-memory graph) are told that all edges
            # changed instead of being told row by row.
            with store.rewriting_edges() as edges_db:
                total = edges_db.execute(
                    f'UPDATE edges SET weight = weight * ? WHERE kind NOT IN {_STRUCTURAL}',
                    (pending,)).rowcount
                cap = int(total * MAX_PRUNE_FRACTION)
                if cap:
                    pruned = edges_db.execute(
                        'DELETE FROM edges WHERE (src, dst, kind) IN (SELECT src, dst, kind FROM edges '
                        f'WHERE weight < ? AND kind NOT IN {_STRUCTURAL} ORDER BY weight LIMIT ?)',
                        (config.prune_below, cap)).rowcount
            pending = 1.0
        store.set_meta('edge_decay_pending', repr(pending))
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
        store.set_meta('last_consolidation', repr(cycle.now))
        store.set_meta('consolidated_max_id', str(cycle.top))
        store.set_meta(_CYCLE_KEY, '')
    return pruned, replayed
