"""How memories change after they are stored: reward, decay, marginalization.

The rules are functions of values (:func:`reinforced`, :func:`decay_factor`); the
cycle's steps apply them through named store methods, one short transaction each.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from brainmem_ros.memory.config import DynamicsConfig
from brainmem_ros.memory.index import VectorIndex
from brainmem_ros.memory.store import EdgeScale, SqliteStore
from brainmem_ros.memory.types import EdgeKind, MemoryUnit

_log = logging.getLogger(__name__)
MAX_STRENGTH = 2.0
#: A new memory's strength (MemoryUnit.strength), and a restored one's.
NEW_STRENGTH = 1.0


@dataclass(frozen=True)
class ConsolidationReport:
    """What one consolidation cycle changed."""

    decayed: int
    marginalized: tuple[int, ...]
    pruned_edges: int
    replayed: tuple[int, ...]


def reinforced(unit: MemoryUnit, reward: float, config: DynamicsConfig) -> tuple[float, float]:
    """(strength, valence) of ``unit`` after ``reward``: towards the bound it moves to."""
    s = unit.strength
    if reward >= 0:
        s += config.reward_rate * reward * (MAX_STRENGTH - s)
    else:
        s += config.reward_rate * reward * s
    valence = unit.valence + config.valence_rate * abs(reward) * (math.copysign(1.0, reward)
                                                                  - unit.valence)
    valence = max(-1.0, min(1.0, valence)) if reward else unit.valence
    return s, valence


def reinforce(store: SqliteStore, units: Sequence[MemoryUnit], reward: float, *, note: str,
              now: float, config: DynamicsConfig) -> list[int]:
    """Move strength and valence of ``units`` by ``reward``; Hebbian co-use edges between them.

    Returns the ids that were marginalized and are strong enough again to be restored.
    """
    restore: list[int] = []
    with store.atomic():
        for unit in units:
            s, valence = reinforced(unit, reward, config)
            store.set_fields(unit.id, strength=s, valence=valence, last_access=now)
            if unit.marginalized and s >= config.marginalize_below and reward > 0:
                restore.append(unit.id)
        ids = sorted({u.id for u in units})[:16]  # bound the pairs: 16 units -> 120 edges
        for a, b in itertools.combinations(ids, 2):
            if reward > 0:
                store.strengthen_edge(a, b, EdgeKind.CO_USE, config.hebbian_rate * reward)
            elif reward < 0:
                store.weaken_edge(a, b, EdgeKind.CO_USE, 1.0 + config.hebbian_rate * reward)
        store.record_reinforcement([u.id for u in units], reward=reward, note=note, now=now)
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
    edges_decayed: bool = False
    prune_from: int = 0  # the next source id the prune sweep reads (0: no sweep)


_CYCLE_KEY = 'consolidation_cycle'
# Units decayed per transaction: the memory's lock is free between chunks, so
# Store and Retrieve wait at most one chunk. A request takes the lock several times
# (a Retrieve ~25), so it can wait once per time it takes it: at 1,000 rows a chunk
# (~7 ms with its fsync, 100k units) a Retrieve during a cycle took 26.5 ms at the
# median against 19.9 alone. Chunks are also committed without an fsync of their own
# (``atomic(durable=False)``): a chunk a power cut loses is lost with the progress
# saved in it, and decayed again when the cycle resumes.
DECAY_CHUNK = 250
# Pause between chunks: Python's locks are not fair, and a cycle that re-takes the
# lock at once starves the requests waiting for it (measured: a Retrieve waited
# for the whole 0.5 s cycle of a 100k store without it). The pause is at least as
# long as the step before it: a cycle holds the lock at most half of the time.
CHUNK_PAUSE_S = 0.002
# While requests keep coming, a cycle takes one step per this many seconds at most.
# Each step between two requests delays the second by its length and then some (the
# hand-over, colder caches): ~2.5 ms at the median on a 100k store, with a long tail,
# whatever the chunk size. Retrieve called back to back (60-75 a second) met a step
# every third call when steps followed each other as fast as the lock allowed, and
# its p99 rose by about that much; at one step a second (1 call in 60-75) it still
# rose by 0-5 ms in five of six runs. At 2.5 s, fewer than 1 call in 150 meets a
# step, under the 1% that a p99 is made of. The price is a slower cycle under load
# (a 100k store's ~400 steps take ~17 minutes, a 1M store's ~4,000 about 3 hours);
# without requests it runs at full speed: the memory consolidates when the robot
# is idle.
BUSY_STEP_INTERVAL_S = 2.5
# Weak edges are swept for once the edge scale has fallen by 1% since the last
# sweep: an hourly cycle would otherwise read every edge for a 0.04% change.
_PRUNE_AFTER = 0.99
# Source ids per prune step (~6k edges at 23 per unit).
PRUNE_CHUNK = 250
# Below this the scale is folded into the stored weights, RENORM_CHUNK source ids
# per step, long before a stored weight could overflow (w / scale) or lose bits.
RENORM_BELOW = 1e-3
RENORM_CHUNK = 2000
_MIN_SCALE = 1e-300  # a clock jump of millennia: every association edge is ~0 anyway
# Unit ids per replay step.
REPLAY_CHUNK = 1000
# One cycle prunes at most this share of the association edges (weakest first):
# a clock jump or a misconfigured rate thins the graph, it never wipes it at once.
MAX_PRUNE_FRACTION = 0.1


def begin_cycle(store: SqliteStore, *, now: float) -> Cycle:
    """Start a cycle at ``now``, or resume the one a crash interrupted."""
    pending = store.get_meta(_CYCLE_KEY)
    if pending:
        c = json.loads(pending)
        return Cycle(now=float(c['now']), last=c['last'], seen=int(c['seen']), top=int(c['top']),
                     done=int(c['done']), resumed=True, edges_decayed=bool(c.get('edges_decayed')),
                     prune_from=int(c.get('prune_from', 0)))
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
                                           'top': cycle.top, 'done': cycle.done,
                                           'edges_decayed': cycle.edges_decayed,
                                           'prune_from': cycle.prune_from}))


def decay_factor(elapsed_s: float, config: DynamicsConfig) -> float:
    """The factor a strength is multiplied by over ``elapsed_s`` seconds."""
    return math.exp(-config.decay_per_day / 86400.0 * elapsed_s)


def unit_elapsed(cycle: Cycle, stamp: float) -> float:
    """Seconds a unit newer than the last cycle decays for: from its stamp, within [last, now]."""
    floor = -math.inf if cycle.last is None else cycle.last
    return cycle.now - min(max(stamp, floor), cycle.now)


def decay_chunk(store: SqliteStore, index: VectorIndex, cycle: Cycle, *,
                config: DynamicsConfig) -> tuple[Cycle, int, list[int]] | None:
    """Decay, fold access into and marginalize the next chunk of units; None when done."""
    if cycle.done >= cycle.top:
        return None
    lo, hi = cycle.done, min(cycle.top, cycle.done + DECAY_CHUNK)
    fold = {'access_gain': config.access_gain, 'cap': MAX_STRENGTH}
    with store.atomic(durable=False, background=True):
        decayed = 0
        old_hi = min(hi, cycle.seen)
        if old_hi > lo:
            elapsed = 0.0 if cycle.last is None else max(0.0, cycle.now - cycle.last)
            decayed += store.decay_range(lo, old_hi, factor=decay_factor(elapsed, config), **fold)
        new_lo = max(lo, cycle.seen)
        if hi > new_lo:
            stamps = store.unprotected_stamps(new_lo, hi)
            store.decay_each([(uid, decay_factor(unit_elapsed(cycle, stamp), config))
                              for uid, stamp in stamps], **fold)
            decayed += len(stamps)
        weak = store.marginalize_weak(lo, hi, below=config.marginalize_below)
        if weak:
            store.bump_generation()
        cycle = replace(cycle, done=hi)
        _save_cycle(store, cycle)
    if weak:
        index.remove(np.asarray(weak, dtype=np.int64))
    return cycle, decayed, weak


def edge_steps(store: SqliteStore, cycle: Cycle, *,
               config: DynamicsConfig) -> Generator[int, None, list[int]]:
    """Decay and prune edges, replay, record the cycle, one short step per ``next()``.

    Yields the edges each step pruned and returns the replayed ids. Every step is one
    transaction: the caller holds the memory's lock for a step and frees it between
    steps. Edge decay is one write of the edge scale
    (:class:`~brainmem_ros.memory.store.EdgeScale`), never a rewrite of the edges;
    pruning sweeps the edges in ranges of source ids.
    """
    if store.edge_scale().below:  # a renormalisation a crash interrupted
        yield from _renormalise(store)
        yield 0
    if not cycle.edges_decayed:
        with store.atomic(durable=False, background=True):
            elapsed_days = 0.0 if cycle.last is None else max(0.0, cycle.now - cycle.last) / 86400.0
            # Decay left pending by a version that rewrote the edges is applied here.
            pending = float(store.get_meta('edge_decay_pending') or '1.0')
            old = store.edge_scale().scale
            scale = max(_MIN_SCALE, old * pending * math.exp(-config.edge_decay_per_day * elapsed_days))
            store.set_edge_scale(EdgeScale(scale))
            store.set_meta('edge_decay_pending', '')
            swept = float(store.get_meta('edge_pruned_at_scale') or '1.0')
            cycle = replace(cycle, edges_decayed=True, prune_from=1 if scale < swept * _PRUNE_AFTER else 0)
            _save_cycle(store, cycle)
        yield 0
    if cycle.prune_from:
        top = store.max_edge_src()
        allowed = 0.0  # a tenth of the association edges swept so far, less those pruned
        while cycle.prune_from <= top:
            lo, hi = cycle.prune_from, cycle.prune_from + PRUNE_CHUNK
            with store.atomic(durable=False, background=True):
                allowed += store.association_edges(lo, hi) * MAX_PRUNE_FRACTION
                pruned = store.prune_edges(lo, hi, below=config.prune_below, limit=int(allowed))
                allowed -= pruned
                cycle = replace(cycle, prune_from=hi)
                if hi > top:
                    store.set_meta('edge_pruned_at_scale', repr(store.edge_scale().scale))
                _save_cycle(store, cycle)
            yield pruned
    replayed: list[int] = []
    if config.replay_count:
        # Rehearse mid-strength units that many others point at: the ones most
        # worth keeping before they fade. Counted per range of ids, best kept.
        best: list[tuple[int, int]] = []
        top = store.max_id()
        for lo in range(0, top, REPLAY_CHUNK):
            best = sorted(best + store.connected_units(
                lo, lo + REPLAY_CHUNK, low=config.marginalize_below * 2, high=1.0,
                limit=config.replay_count), key=lambda c: (-c[0], c[1]))[:config.replay_count]
            yield 0
        replayed = [uid for _, uid in best]
    with store.atomic(durable=False, background=True):
        store.strengthen_units(replayed, gain=config.access_gain * 5, cap=MAX_STRENGTH)
        store.set_meta('last_consolidation', repr(cycle.now))
        store.set_meta('consolidated_max_id', str(cycle.top))
        store.set_meta(_CYCLE_KEY, '')
    yield 0
    if store.edge_scale().scale < RENORM_BELOW:
        yield from _renormalise(store)
    return replayed


def _renormalise(store: SqliteStore) -> Iterator[int]:
    """Fold the edge scale into the stored weights, one range of source ids per step."""
    state = store.edge_scale()
    old = state.scale
    while True:
        with store.atomic(durable=False, background=True):
            state = store.renormalise_edges(state.below + RENORM_CHUNK)
            if not state.below:
                # The scale of the last sweep, in the new unit: sweeps go on as before.
                swept = float(store.get_meta('edge_pruned_at_scale') or '1.0')
                store.set_meta('edge_pruned_at_scale', repr(swept / old))
                return
        yield 0
