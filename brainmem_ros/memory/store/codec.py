"""How values are written to and read from the store's columns: one decoder per row kind.

Poses are a JSON array ``[x, y, z, qx, qy, qz, qw, frame]`` wherever they are
stored (units, facts, claims); entities, actions and state changes are JSON arrays.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple, TypeVar

from brainmem_ros.memory.store.sql import STRUCTURAL_KINDS
from brainmem_ros.memory.types import (
    EdgeKind,
    Enrichment,
    Entity,
    MemoryUnit,
    Outcome,
    Pose,
    StateChange,
    UnitType,
)


def entities_json(entities: Sequence[Entity]) -> str:
    """The ``entities`` column."""
    return json.dumps([[e.name, e.type, [list(a) for a in e.attributes]] for e in entities])


def entity_names(entities: Sequence[Entity]) -> str:
    """The ``entity_names`` column (what the full-text index reads)."""
    return ' '.join(e.name for e in entities)


def actions_json(actions: Sequence[str]) -> str:
    """The ``actions`` column."""
    return json.dumps(list(actions))


def changes_json(changes: Sequence[StateChange]) -> str:
    """The ``state_changes`` column."""
    return json.dumps([[c.object, c.attribute, c.before, c.after] for c in changes])


def pose_json(pose: Pose | None) -> str | None:
    """A ``pose`` column (NULL without a pose)."""
    if pose is None:
        return None
    return json.dumps([pose.x, pose.y, pose.z, pose.qx, pose.qy, pose.qz, pose.qw, pose.frame])


def decode_pose(text: str | None) -> Pose | None:
    """The pose a ``pose`` column holds."""
    if text is None:
        return None
    x, y, z, qx, qy, qz, qw, frame = json.loads(text)
    return Pose(x, y, z, qx, qy, qz, qw, frame)


def row_to_unit(row: sqlite3.Row | tuple[Any, ...]) -> MemoryUnit:
    """A unit from a row of :data:`~brainmem_ros.memory.store.sql.UNIT_COLUMNS`."""
    (uid, stamp, utype, episode, source, text, entities, actions, changes, outcome, valence,
     importance, strength, access_count, last_access, protected, marginalized, pose,
     valid_from, valid_until, repeats, enrichment) = row
    return MemoryUnit(
        id=uid, stamp=stamp, text=text, type=unit_type(utype), episode_id=episode, source=source,
        entities=tuple(Entity(n, t, tuple((k, v) for k, v in a)) for n, t, a in json.loads(entities)),
        actions=tuple(json.loads(actions)),
        state_changes=tuple(StateChange(*c) for c in json.loads(changes)),
        outcome=Outcome(outcome), valence=valence, importance=importance, strength=strength,
        access_count=access_count, last_access=last_access, protected=bool(protected),
        marginalized=bool(marginalized), pose=decode_pose(pose), valid_from=valid_from,
        valid_until=valid_until, repeats=repeats, enrichment=Enrichment(enrichment),
    )


class UnitHead(NamedTuple):
    """The columns retrieval filters and ranks by: no JSON to decode, no entity objects."""

    id: int
    stamp: float
    type: UnitType
    episode_id: str
    importance: float
    strength: float
    valence: float
    last_access: float
    marginalized: bool
    valid_from: float
    valid_until: float | None
    pose: Pose | None


_E = TypeVar('_E', bound=Enum)


def by_value(kinds: type[_E]) -> Callable[[str], _E]:
    """The member of ``kinds`` stored as a value, from a dict (ValueError for none, as the
    enum's call). The enum's own lookup by value is a Python call of its metaclass: a few
    hundred heads are read per Retrieve, and it was ~0.3 ms of one (cProfile, 100k bench store)."""
    members = {k.value: k for k in kinds}

    def lookup(value: str) -> _E:
        found = members.get(value)
        return found if found is not None else kinds(value)
    return lookup


#: :class:`UnitType` and :class:`EdgeKind` by stored value.
unit_type = by_value(UnitType)
edge_kind = by_value(EdgeKind)


def row_to_head(row: Sequence[Any]) -> UnitHead:
    """A head from a row of :data:`~brainmem_ros.memory.store.sql.HEAD_COLUMNS` and a pose."""
    (uid, stamp, utype, episode, importance, strength, valence, last_access, marginalized,
     valid_from, valid_until, pose) = row
    return UnitHead(uid, stamp, unit_type(utype), episode, importance, strength, valence,
                    last_access, bool(marginalized), valid_from, valid_until, decode_pose(pose))


@dataclass(frozen=True)
class EdgeScale:
    """The factor association edges are read with: effective weight = stored weight x factor.

    Decaying every association edge is one write of ``scale``, not a rewrite of the
    edge table. ``below`` is 0 except while a renormalisation is under way
    (:meth:`SqliteStore.renormalise_edges`): edges with ``src < below`` are rewritten
    already and read as stored, as structural edges always are.
    """

    scale: float = 1.0
    below: int = 0

    def factor(self, src: int, kind: str) -> float:
        """The factor of one edge."""
        return 1.0 if kind in STRUCTURAL_KINDS or src < self.below else self.scale

    @property
    def params(self) -> tuple[int, float]:
        """The parameters of :data:`~brainmem_ros.memory.store.sql.EFFECTIVE_SQL`, in order."""
        return (self.below, self.scale)

    @classmethod
    def parse(cls, raw: str) -> EdgeScale:
        """The scale stored in meta ('' before the first decay)."""
        if not raw:
            return cls()
        c = json.loads(raw)
        return cls(float(c['scale']), int(c['below']))

    def dump(self) -> str:
        """The meta value."""
        return json.dumps({'scale': self.scale, 'below': self.below})
