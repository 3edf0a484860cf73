"""Conversions between ROS messages and the memory core's value objects."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose as PoseMsg
from geometry_msgs.msg import PoseStamped

from brainmem_ros.errors import InvalidInputError
from brainmem_ros.memory.facts import Fact
from brainmem_ros.memory.requests import check_pose
from brainmem_ros.memory.types import MemoryUnit, Pose, ScoredMemory, UnitType
from brainmem_ros.msg import Entity as EntityMsg
from brainmem_ros.msg import MemoryUnit as MemoryUnitMsg
from brainmem_ros.msg import Observation
from brainmem_ros.msg import ScoredMemory as ScoredMemoryMsg
from brainmem_ros.msg import StateChange as StateChangeMsg

# Reflections are the memory's own insights, linked to their evidence; a client
# storing one would forge that.
CLIENT_TYPES = tuple(t.value for t in UnitType if t is not UnitType.REFLECTION)


@dataclass(frozen=True)
class StampPolicy:
    """How far an observation's stamp may be from the node's clock (seconds)."""

    future_s: float = 60.0
    max_age_s: float = 0.0  # 0 = no limit


def to_time(seconds: float | None) -> Time:
    """builtin_interfaces/Time from POSIX seconds (None or <= 0 → zero)."""
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        return Time()
    sec = int(seconds)
    return Time(sec=sec, nanosec=min(999_999_999, int(round((seconds - sec) * 1e9))))


def _check_nanosec(t: Time, name: str) -> None:
    if not 0 <= t.nanosec < 1_000_000_000:
        msg = f'{name}.nanosec must be within 0..999999999, got {t.nanosec}'
        raise InvalidInputError(msg)


def from_time(t: Time, name: str = 'time') -> float | None:
    """POSIX seconds, or None for the zero time ("unset"); a nanosec field out of range or a
    negative sec refused (no memory is older than 1970: such a bound is a wrong clock)."""
    _check_nanosec(t, name)
    if t.sec < 0:
        msg = f'{name}.sec is negative ({t.sec}); leave {name} zero for "unset"'
        raise InvalidInputError(msg)
    if t.sec == 0 and t.nanosec == 0:
        return None
    return float(t.sec + t.nanosec * 1e-9)


def stamp_seconds(t: Time, *, now: float, policy: StampPolicy, name: str = 'header.stamp') -> float:
    """POSIX seconds of a message stamp on the node's clock (zero = now); odd stamps refused."""
    _check_nanosec(t, name)
    if t.sec < 0:
        msg = f'{name}.sec is negative ({t.sec}); leave the stamp zero to mean "now"'
        raise InvalidInputError(msg)
    if t.sec == 0 and t.nanosec == 0:
        return now
    seconds = float(t.sec + t.nanosec * 1e-9)
    if seconds > now + policy.future_s:
        msg = (f'{name} {seconds:.3f} is {seconds - now:.0f} s ahead of the node clock ({now:.3f}), '
               f'more than stamp_future_tolerance_s={policy.future_s:g}: check the sender\'s clock '
               'and use_sim_time')
        raise InvalidInputError(msg)
    if policy.max_age_s > 0 and seconds < now - policy.max_age_s:
        msg = (f'{name} {seconds:.3f} is {now - seconds:.0f} s before the node clock ({now:.3f}), '
               f'more than max_stamp_age_s={policy.max_age_s:g}: check the sender\'s clock and '
               'use_sim_time (a bag replayed with --clock needs use_sim_time:=true)')
        raise InvalidInputError(msg)
    return seconds


def pose_from_msg(pose: PoseMsg, frame: str, *, orientation: bool = True) -> Pose:
    """Domain pose; NaN/inf, far-out coordinates and a zero quaternion are refused.

    A non-unit quaternion is normalised (a rotation, whatever its scale). With
    ``orientation=False`` (a place to search around) the rotation is ignored.
    """
    p, o = pose.position, pose.orientation
    if not orientation:
        Pose(p.x, p.y, p.z, o.x, o.y, o.z, o.w)  # NaN/inf still named
        o = PoseMsg().orientation
    # The memory's own checks (finite, within reach of the origin, a rotation), then normalised.
    check_pose(Pose(p.x, p.y, p.z, o.x, o.y, o.z, o.w))
    q = (o.x, o.y, o.z, o.w)
    norm = math.sqrt(sum(c * c for c in q))
    if norm != 1.0:
        q = tuple(c / norm for c in q)
    return Pose(p.x, p.y, p.z, q[0], q[1], q[2], q[3], frame or 'map')


def pose_to_msg(pose: Pose) -> PoseStamped:
    """geometry_msgs/PoseStamped of a domain pose."""
    msg = PoseStamped()
    msg.header.frame_id = pose.frame
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = pose.x, pose.y, pose.z
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = pose.qx, pose.qy, pose.qz, pose.qw
    return msg


def observation_kwargs(msg: Observation, *, episode_id: str, pose_at: Callable[[float], Pose | None],
                       now: float, stamps: StampPolicy) -> dict[str, Any]:
    """Keyword arguments of :meth:`BrainMem.store_ex` for an Observation message.

    ``now`` is the node's clock: an unstamped observation happened now, on the same
    clock as everything else the memory measures time with. ``pose_at`` gives the robot's
    pose at a stamp, for a message that carries none (:mod:`brainmem_ros.ros.pose_history`).
    """
    kind = msg.type or 'observation'
    if kind not in CLIENT_TYPES:
        msg_ = f'type must be one of {", ".join(CLIENT_TYPES)}, got {kind[:40]!r}'
        raise InvalidInputError(msg_)
    # Counts of entities and actions: checked by the memory (requests.check_observation).
    stamp = stamp_seconds(msg.header.stamp, now=now, policy=stamps)
    kwargs: dict[str, Any] = {
        'stamp': stamp,
        'episode_id': msg.episode_id or episode_id,
        'source': msg.source,
        'type': kind,
        'pose': pose_from_msg(msg.pose, msg.header.frame_id) if msg.has_pose else pose_at(stamp),
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
        vector=float(scored.parts.vector), lexical=float(scored.parts.lexical),
        entity=float(scored.parts.entity), prior=float(scored.parts.prior),
        typicality=float(scored.parts.typicality), redundancy=float(scored.parts.redundancy),
        path=list(scored.path))


def check_finite(name: str, value: float) -> float:
    """``value`` if finite, else InvalidInputError naming ``name``."""
    if not math.isfinite(value):
        msg = f'{name} must be a finite number, got {value!r}'
        raise InvalidInputError(msg)
    return value


def facts_to_response(facts: Sequence[Fact], response: Any, *, as_of: float | None) -> None:
    """Fill a StateOf response: one entry per fact in every array, evidence concatenated."""
    response.entities = [f.entity for f in facts]
    response.attributes = [f.attribute for f in facts]
    response.values = [f.value for f in facts]
    response.valid_from = [to_time(f.valid_from) for f in facts]
    response.valid_until = [to_time(f.valid_until) for f in facts]
    response.holds = [f.current if as_of is None else f.valid_at(as_of) for f in facts]
    response.confidence = [float(f.confidence) for f in facts]
    response.sources = [f.source for f in facts]
    response.evidence_counts = [len(f.evidence) for f in facts]
    response.evidence = [uid for f in facts for uid in f.evidence]
    response.has_pose = [f.pose is not None for f in facts]
    response.poses = [pose_to_msg(f.pose) if f.pose is not None else PoseStamped() for f in facts]
    for f, pose in zip(facts, response.poses, strict=True):
        pose.header.stamp = to_time(f.last_seen)
