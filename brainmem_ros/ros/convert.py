"""Conversions between ROS messages and the memory core's value objects."""

from __future__ import annotations

import math
from typing import Any

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose as PoseMsg
from geometry_msgs.msg import PoseStamped

from brainmem_ros.errors import InvalidInputError
from brainmem_ros.memory.types import MemoryUnit, Pose, ScoredMemory
from brainmem_ros.msg import Entity as EntityMsg
from brainmem_ros.msg import MemoryUnit as MemoryUnitMsg
from brainmem_ros.msg import Observation
from brainmem_ros.msg import ScoredMemory as ScoredMemoryMsg
from brainmem_ros.msg import StateChange as StateChangeMsg


def to_time(seconds: float | None) -> Time:
    """builtin_interfaces/Time from POSIX seconds (None or <= 0 → zero)."""
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        return Time()
    sec = int(seconds)
    return Time(sec=sec, nanosec=min(999_999_999, int(round((seconds - sec) * 1e9))))


def from_time(t: Time) -> float | None:
    """POSIX seconds, or None for the zero time ("unset")."""
    if t.sec == 0 and t.nanosec == 0:
        return None
    return float(t.sec + t.nanosec * 1e-9)


def pose_from_msg(pose: PoseMsg, frame: str) -> Pose:
    """Domain pose; NaN/inf coordinates raise InvalidInputError naming the field."""
    p, o = pose.position, pose.orientation
    return Pose(p.x, p.y, p.z, o.x, o.y, o.z, o.w, frame or 'map')


def pose_to_msg(pose: Pose) -> PoseStamped:
    """geometry_msgs/PoseStamped of a domain pose."""
    msg = PoseStamped()
    msg.header.frame_id = pose.frame
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = pose.x, pose.y, pose.z
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = pose.qx, pose.qy, pose.qz, pose.qw
    return msg


def observation_kwargs(msg: Observation, *, episode_id: str, latest_pose: Pose | None
                       ) -> dict[str, Any]:
    """Keyword arguments of :meth:`BrainMem.store_ex` for an Observation message."""
    kwargs: dict[str, Any] = {
        'stamp': from_time(msg.header.stamp),
        'episode_id': msg.episode_id or episode_id,
        'source': msg.source,
        'type': msg.type or 'observation',
        'pose': pose_from_msg(msg.pose, msg.header.frame_id) if msg.has_pose else latest_pose,
        'entities': list(msg.entities),
        'actions': list(msg.actions),
    }
    if msg.has_importance:
        kwargs['importance'] = float(msg.importance)
    if msg.has_valence:
        kwargs['valence'] = float(msg.valence)
    return kwargs


def unit_to_msg(unit: MemoryUnit) -> MemoryUnitMsg:
    """MemoryUnit message of a stored unit."""
    msg = MemoryUnitMsg()
    msg.id = unit.id
    msg.stamp = to_time(unit.stamp)
    msg.episode_id = unit.episode_id
    msg.type = unit.type.value
    msg.source = unit.source
    msg.text = unit.text
    msg.entities = [EntityMsg(name=e.name, type=e.type) for e in unit.entities]
    msg.actions = list(unit.actions)
    msg.state_changes = [StateChangeMsg(subject=c.object, attribute=c.attribute, before=c.before,
                                        after=c.after) for c in unit.state_changes]
    msg.outcome = unit.outcome.value
    msg.valence = float(unit.valence)
    msg.importance = float(unit.importance)
    msg.strength = float(unit.strength)
    msg.access_count = min(unit.access_count, 2**32 - 1)
    msg.last_access = to_time(unit.last_access)
    msg.repeats = min(unit.repeats, 2**32 - 1)
    msg.is_protected = unit.protected
    msg.is_marginalized = unit.marginalized
    if unit.pose is not None:
        msg.has_pose = True
        msg.pose = pose_to_msg(unit.pose)
        msg.pose.header.stamp = msg.stamp
    msg.valid_from = to_time(unit.valid_from)
    msg.valid_until = to_time(unit.valid_until)
    msg.enrichment = unit.enrichment.value
    return msg


def scored_to_msg(scored: ScoredMemory) -> ScoredMemoryMsg:
    """ScoredMemory message of a retrieval result."""
    return ScoredMemoryMsg(
        unit=unit_to_msg(scored.unit), score=float(scored.score),
        relevance=float(scored.parts.relevance), recency=float(scored.parts.recency),
        importance=float(scored.parts.importance), activation=float(scored.parts.activation),
        path=list(scored.path))


def check_finite(name: str, value: float) -> float:
    """``value`` if finite, else InvalidInputError naming ``name``."""
    if not math.isfinite(value):
        msg = f'{name} must be a finite number, got {value!r}'
        raise InvalidInputError(msg)
    return value
