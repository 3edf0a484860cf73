"""Conversions between memory units and the fleet server's rows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from brainmem_ros.fleet.cache_store import CachedUnit
from brainmem_ros.fleet.pg_store import FleetRow
from brainmem_ros.memory.types import MemoryUnit


def to_row(unit: MemoryUnit, version: int, vector: np.ndarray, *,
           superseded_at: float | None = None) -> FleetRow:
    """The server row of one of this robot's units (the sender's robot id is implied)."""
    pose = unit.pose
    return FleetRow(
        unit_id=unit.id, version=version, stamp=unit.stamp, type=unit.type.value,
        episode_id=unit.episode_id, source=unit.source, text=unit.text,
        entity_names=' '.join(e.name for e in unit.entities),
        entities=json.dumps([[e.name, e.type, [list(a) for a in e.attributes]] for e in unit.entities]),
        state_changes=json.dumps([[c.object, c.attribute, c.before, c.after] for c in unit.state_changes]),
        outcome=unit.outcome.value, importance=unit.importance, strength=unit.strength,
        valence=unit.valence, marginalized=unit.marginalized, vector=vector, superseded_at=superseded_at,
        pose=None if pose is None else json.dumps([pose.x, pose.y, pose.z, pose.qx, pose.qy, pose.qz,
                                                   pose.qw, pose.frame]))


def cached_unit(row: Sequence[Any]) -> CachedUnit:
    """A row of :meth:`FleetClient.changes_after` as the cache keeps it."""
    def text(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value)

    return CachedUnit(
        robot_id=str(row[0]), unit_id=int(row[1]), stamp=float(row[2]), type=str(row[3]),
        episode_id=str(row[4]), source=str(row[5]), text=str(row[6]), entities=text(row[7]),
        state_changes=text(row[8]), outcome=str(row[9]), importance=float(row[10]),
        strength=float(row[11]), valence=float(row[12]), pose=None if row[13] is None else text(row[13]),
        marginalized=bool(row[14]), updated=float(row[15]), entity_names=str(row[16]),
        vector=np.asarray(json.loads(row[17]), dtype=np.float32),
        superseded_at=None if row[18] is None else float(row[18]))
