"""The fleet tier's value objects: a row as sent, a hit as recalled, a reward, a filter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class FleetRow:
    """One shared unit as the server stores it (the sender's robot id is implied)."""

    unit_id: int
    version: int
    stamp: float
    type: str
    episode_id: str
    source: str
    text: str
    entity_names: str
    entities: str  # JSON, as in the robot's SQLite
    state_changes: str  # JSON
    outcome: str
    importance: float
    strength: float
    valence: float
    pose: str | None  # JSON [x, y, z, qx, qy, qz, qw, frame]
    marginalized: bool
    vector: npt.NDArray[np.float32]
    superseded_at: float | None = None  # stamp of the owner's memory that superseded it


@dataclass(frozen=True)
class FleetHit:
    """A fleet unit found by recall, with its raw evidence."""

    robot_id: str
    unit_id: int
    stamp: float
    type: str
    episode_id: str
    source: str
    text: str
    entities: Any
    state_changes: Any
    outcome: str
    importance: float
    strength: float
    valence: float
    pose: Any
    marginalized: bool
    updated: float  # when the owner last sent it (POSIX seconds)
    cosine: float
    lexical: float  # ts_rank_cd, 0 when found by the vector list only
    superseded_at: float | None = None  # a later memory of its owner closed what it stated


@dataclass(frozen=True)
class Reinforcement:
    """A reward one robot gave to a unit another robot shared."""

    id: int  # server id (0 before it is sent)
    robot_id: str  # owner of the unit
    unit_id: int
    by_robot: str
    reward: float
    note: str
    stamp: float


@dataclass(frozen=True)
class RecallFilter:
    """What fleet recall may return."""

    types: tuple[str, ...]
    since: float | None = None
    until: float | None = None
    include_marginalized: bool = False
