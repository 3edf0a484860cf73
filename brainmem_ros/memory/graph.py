"""Linking new units into the memory graph, and spreading activation over it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from brainmem_ros.memory.config import LinkConfig
from brainmem_ros.memory.index import VectorIndex
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import Edge, EdgeKind, MemoryUnit

# Each unit's strongest edges as (other unit, weight), strongest first.
NeighbourFn = Callable[[Sequence[int]], Mapping[int, Sequence[tuple[int, float]]]]


def edge_pairs(edges: Mapping[int, Sequence[Edge]]) -> dict[int, list[tuple[int, float]]]:
    """Edges per unit as the (other unit, weight) pairs :func:`spread` reads."""
    return {uid: [(e.dst if e.src == uid else e.src, e.weight) for e in row] for uid, row in edges.items()}
# One vector search's (scores, ids), best first; ids are -1 past the index's size.
Neighbours = tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]


def link_candidates(store: SqliteStore, index: VectorIndex, unit: MemoryUnit,
                    vector: npt.NDArray[np.float32], config: LinkConfig, *,
                    nearest: Neighbours | None = None) -> list[Edge]:
    """Edges from a new unit to existing ones, found through indexes only.

    Candidates come from the episode index (temporal), the entity index (shared
    entities, weighted by overlap) and the vector index (similar meaning); the
    strongest ``max_links`` survive, so no unit gets an unbounded fan-out.
    ``nearest`` is the vector search for ``vector`` if the caller already ran one
    with at least ``similar_links + 1`` results (Store's near-duplicate check does:
    one search per Store instead of two, which matters with IVF at 1M units).
    """
    best: dict[tuple[int, EdgeKind], float] = {}

    def offer(other: int, kind: EdgeKind, weight: float) -> None:
        if other != unit.id and weight > best.get((other, kind), 0.0):
            best[(other, kind)] = weight

    if unit.episode_id and config.temporal_links and config.temporal_window_s > 0:
        window = config.temporal_window_s
        before = [(other, stamp) for other, stamp in store.episode_before(
            unit.episode_id, unit.stamp, since=unit.stamp - window, limit=config.temporal_links + 1)
            if other != unit.id][:config.temporal_links]
        for lag, (other, stamp) in enumerate(before):
            offer(other, EdgeKind.TEMPORAL, temporal_weight(unit.stamp - stamp, lag + 1, config))

    keys = {e.key for e in unit.entities if e.key}
    if keys and config.entity_links:
        per_key = store.units_with_entities(sorted(keys), per_key=config.entity_links)
        candidates = sorted({i for ids in per_key.values() for i in ids if i != unit.id})
        for other, other_keys in store.entity_keys_of(candidates).items():
            shared = keys & other_keys
            if shared:
                offer(other, EdgeKind.ENTITY, max(0.25, len(shared) / len(keys | other_keys)))

    if config.similar_links and len(index):
        wanted = config.similar_links + 1
        if nearest is None or len(nearest[1]) < wanted:
            scores, ids = index.search(vector.reshape(1, -1), wanted)
            nearest = (scores[0], ids[0])
        for score, other in zip(nearest[0][:wanted], nearest[1][:wanted], strict=True):
            if other >= 0 and float(score) >= config.similar_threshold:
                offer(int(other), EdgeKind.SIMILAR, float(min(1.0, score)))

    ranked = sorted(best.items(), key=lambda item: -item[1])[:config.max_links]
    return [Edge(unit.id, other, kind, weight) for (other, kind), weight in ranked]


def temporal_weight(gap_s: float, lag: int, config: LinkConfig) -> float:
    """Weight of the temporal link to the ``lag``-th previous unit of an episode, ``gap_s`` earlier.

    It falls with the time between the two and, at equal times, with the number of
    steps: what happened next is recalled with an event far more often than what came
    two steps later (the contiguity effect of free recall). When the next step is what
    solved a problem like the one at hand, that is the step activation should reach
    first (docs/retrieval.md, "Temporal links").
    """
    by_time = max(0.3, 1.0 - abs(gap_s) / config.temporal_window_s)
    return by_time * config.temporal_lag_decay ** (lag - 1)


class Activation(NamedTuple):
    """How strongly a unit was activated (a tuple: built per update).

    ``level`` is what the unit spreads on (its own seed level or what reached it,
    whichever is larger); ``received`` is the strongest activation other units passed to
    it (0 for a seed nothing reached), and ``path`` the way that came, from its seed.
    """

    level: float
    path: tuple[int, ...]
    received: float = 0.0


def spread(seeds: Mapping[int, float], neighbours: NeighbourFn, *, hops: int, decay: float,
           threshold: float, max_activated: int) -> dict[int, Activation]:
    """Spread activation from ``seeds`` over the graph.

    Each hop passes ``level * edge weight * decay`` to every neighbour (edges in
    either direction; ``neighbours`` returns each unit's strongest edges as (other
    unit, weight) pairs, which caps the fan-out); a unit keeps the strongest activation
    that reaches it, and the path it came by. Spreading stops below ``threshold``, after
    ``hops`` hops, or once ``max_activated`` units are reached, so the work is bounded
    whatever the graph's size.

    >>> edges = {1: [(2, 1.0)], 2: [(1, 1.0)]}
    >>> spread({1: 1.0}, lambda ids: {i: edges.get(i, []) for i in ids},
    ...        hops=2, decay=0.5, threshold=0.1, max_activated=10)[2]
    Activation(level=0.5, path=(1, 2), received=0.5)
    """
    active = {uid: Activation(level, (uid,)) for uid, level in seeds.items()}
    frontier = [uid for uid, level in seeds.items() if level >= threshold]
    for _ in range(hops):
        if not frontier or len(active) >= max_activated:
            break
        edges = neighbours(frontier)
        updated: list[int] = []
        for uid in frontier:
            source_level, path, _ = active[uid]
            passed = source_level * decay
            for other, weight in edges.get(uid, ()):
                level = passed * weight
                if level < threshold or other in path:
                    continue
                current = active.get(other)
                if current is None:
                    if len(active) >= max_activated:
                        continue
                    active[other] = Activation(level, (*path, other), level)
                    updated.append(other)
                elif level > current.received:
                    # A seed reached by a stronger neighbour spreads on at the larger level.
                    active[other] = Activation(max(level, current.level), (*path, other), level)
                    if level > current.level:
                        updated.append(other)
        frontier = list(dict.fromkeys(updated))
    return active
