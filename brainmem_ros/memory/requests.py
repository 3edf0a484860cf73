"""Validation of what callers ask the memory: every refusal names the problem.

Services, topics and the Python API all go through these checks, so a bad request
is refused the same way wherever it comes from (:class:`InvalidInputError`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Literal, NamedTuple

from brainmem_ros.errors import BrainMemError, InvalidInputError
from brainmem_ros.memory.types import Entity, ObservationInput, Pose, UnitType

TimeLike = float | int | datetime
ForgetMode = Literal['marginalize', 'restore', 'protect', 'unprotect', 'delete']
FORGET_MODES: tuple[str, ...] = ('marginalize', 'restore', 'protect', 'unprotect', 'delete')
# Bytes of an episode id, source, entity or action name.
NAME_BYTES = 256
# Bounds on what one observation may carry (docs/reliability.md "Limits"): far above
# what perception produces, far below what would slow a Store or bloat the store.
MAX_ENTITIES = 64
MAX_ACTIONS = 64
MAX_COORDINATE_M = 1e6


def to_seconds(value: TimeLike | None, name: str) -> float | None:
    """POSIX seconds from seconds or a datetime; None stays None."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        msg = f'{name} must be POSIX seconds or a datetime, got {value!r}'
        raise InvalidInputError(msg)
    return float(value)


def check_number(value: object, name: str, low: float, high: float) -> float:
    """A finite number within [low, high] (not a bool, not a numeric string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        msg = f'{name} must be a number within {low:g}..{high:g}, got {value!r}'[:300]
        raise InvalidInputError(msg)
    return float(value)


def check_stamp(stamp: float | None, *, now: float, future_s: float) -> float | None:
    """An observation's stamp: None or 0 for "now"; before 1970 or further than ``future_s``
    ahead of the memory's clock refused.

    A stamp from a wrong clock is not harmless: the facts derived from the observation
    take their validity from it, and one stamped years ahead would stay "current" over
    every later observation of the same thing.
    """
    if stamp is None or stamp == 0:
        return None
    if stamp < 0:
        msg = f'stamp {stamp!r} is before 1970; give None (or 0) for "now"'
        raise InvalidInputError(msg)
    if stamp > now + future_s:
        msg = (f'stamp {stamp:.3f} is {stamp - now:.0f} s ahead of the memory\'s clock ({now:.3f}), '
               f'more than store.stamp_future_tolerance_s={future_s:g}: check the clock it came from')
        raise InvalidInputError(msg)
    return stamp


def check_pose(pose: object, name: str = 'pose') -> Pose | None:
    """A pose within ``MAX_COORDINATE_M`` of its frame's origin, with a rotation (not a zero
    quaternion); None stays None."""
    if pose is None:
        return None
    if not isinstance(pose, Pose):
        msg = f'{name} must be a Pose, got {type(pose).__name__}'
        raise InvalidInputError(msg)
    for axis in ('x', 'y', 'z'):
        if abs(getattr(pose, axis)) > MAX_COORDINATE_M:
            msg = (f'{name}.{axis}={getattr(pose, axis):g} is beyond {MAX_COORDINATE_M:g} m '
                   'from the frame origin')
            raise InvalidInputError(msg)
    if math.sqrt(pose.qx ** 2 + pose.qy ** 2 + pose.qz ** 2 + pose.qw ** 2) < 1e-6:
        msg = f'{name}.orientation is a zero quaternion (no rotation): give w=1 for "no rotation"'
        raise InvalidInputError(msg)
    return pose


def as_items(values: object, name: str) -> tuple[object, ...]:
    """A sequence argument as a tuple; a lone string is one item (not its characters)."""
    if values is None:
        return ()
    if isinstance(values, (str, UnitType, Entity)):
        return (values,)
    if not isinstance(values, Sequence | frozenset | set):
        msg = f'{name} must be a sequence, got {type(values).__name__}'
        raise InvalidInputError(msg)
    return tuple(values)


def check_text(text: str, name: str, *, max_bytes: int, required: bool) -> str:
    """Validated text: a str, valid UTF-8, not too long, non-empty when required."""
    if not isinstance(text, str):
        msg = f'{name} must be a string, got {type(text).__name__}'
        raise InvalidInputError(msg)
    try:
        size = len(text.encode('utf-8'))
    except UnicodeEncodeError:
        msg = f'{name} is not valid UTF-8 (it contains a lone surrogate)'
        raise InvalidInputError(msg) from None
    if '\x00' in text:
        msg = f'{name} contains a NUL character'
        raise InvalidInputError(msg)
    if size > max_bytes:
        msg = f'{name} is {size} bytes, more than the {max_bytes} allowed'
        raise InvalidInputError(msg)
    if required and not text.strip():
        msg = f'{name} is empty'
        raise InvalidInputError(msg)
    return text.strip()


def check_ids(ids: Sequence[int]) -> None:
    """Memory ids: at least one, each a positive integer."""
    if not ids:
        msg = 'no memory ids given'
        raise InvalidInputError(msg)
    bad = [i for i in ids if isinstance(i, bool) or not isinstance(i, int) or i <= 0]
    if bad:
        msg = f'memory ids must be positive integers, got {bad[:5]!r}'
        raise InvalidInputError(msg)


def check_reward(reward: float) -> float:
    """A reward within [-1, 1]."""
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or \
            not math.isfinite(reward) or not -1.0 <= reward <= 1.0:
        msg = f'reward must be within -1..1, got {reward!r}'
        raise InvalidInputError(msg)
    return float(reward)


def check_forget(mode: str, *, confirm: bool) -> None:
    """A forget mode; delete only when confirmed."""
    if mode not in FORGET_MODES:
        msg = f'unknown forget mode {mode!r} (expected one of: {", ".join(FORGET_MODES)})'
        raise InvalidInputError(msg)
    if mode == 'delete' and not confirm:
        msg = 'hard delete is irreversible and needs confirm=True'
        raise InvalidInputError(msg)


class RecallRequest(NamedTuple):
    """A validated Retrieve (see :func:`check_recall`)."""

    query: str
    goal: str
    state: str
    top_k: int
    since: float | None
    until: float | None
    types: frozenset[UnitType] | None
    as_of: float | None


def check_recall(query: str | None, goal: str | None, state: str | None, *, top_k: int | None,
                 default_top_k: int, max_top_k: int, max_bytes: int, since: TimeLike | None,
                 until: TimeLike | None, near: Pose | None, radius: float | None,
                 types: Sequence[str | UnitType] | None, as_of: TimeLike | None) -> RecallRequest:
    """A Retrieve's arguments checked: something to recall by, top_k in range, a sound window."""
    q_text = check_text(query or '', 'query', max_bytes=max_bytes, required=False)
    g_text = check_text(goal or '', 'goal', max_bytes=max_bytes, required=False)
    s_text = check_text(state or '', 'state', max_bytes=max_bytes, required=False)
    if not (q_text or g_text or s_text):
        msg = 'query, goal and state are all empty: nothing to recall by'
        raise InvalidInputError(msg)
    k = default_top_k if top_k is None or top_k == 0 else top_k
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= max_top_k:
        msg = f'top_k must be within 1..{max_top_k}, got {top_k!r}'
        raise InvalidInputError(msg)
    t_since, t_until = to_seconds(since, 'since'), to_seconds(until, 'until')
    if t_since is not None and t_until is not None and t_since > t_until:
        msg = f'time window is reversed: since {t_since} is after until {t_until}'
        raise InvalidInputError(msg)
    if (near is None) != (radius is None):
        msg = 'near and radius go together: give both or neither'
        raise InvalidInputError(msg)
    check_pose(near, 'near')
    if radius is not None and (isinstance(radius, bool) or not isinstance(radius, (int, float))
                               or not (math.isfinite(radius) and radius > 0)):
        msg = f'radius must be a positive number of metres, got {radius!r}'
        raise InvalidInputError(msg)
    parsed_types = frozenset(UnitType.parse(t) for t in as_items(types, 'types')) if types else None
    return RecallRequest(q_text, g_text, s_text, k, t_since, t_until, parsed_types,
                         to_seconds(as_of, 'as_of'))


class CheckedObservation(NamedTuple):
    """A validated observation (see :func:`check_observation`); ``stamp`` None: now."""

    text: str
    episode_id: str
    source: str
    type: UnitType
    stamp: float | None
    importance: float | None
    valence: float | None
    entities: tuple[Entity, ...]
    actions: tuple[str, ...]


def check_observation(item: ObservationInput, *, max_bytes: int, now: float,
                      future_s: float) -> CheckedObservation:
    """An observation's fields checked: text, names, type, stamp, pose, ratings, entities,
    actions (``now`` and ``future_s``: see :func:`check_stamp`)."""
    text = check_text(item.text, 'text', max_bytes=max_bytes, required=True)
    episode = check_text(item.episode_id or '', 'episode_id', max_bytes=NAME_BYTES, required=False)
    src = check_text(item.source or '', 'source', max_bytes=NAME_BYTES, required=False)
    utype = UnitType.parse(item.type)
    when = check_stamp(to_seconds(item.stamp, 'stamp'), now=now, future_s=future_s)
    check_pose(item.pose)
    importance = None if item.importance is None else check_number(item.importance, 'importance', 1.0, 10.0)
    valence = None if item.valence is None else check_number(item.valence, 'valence', -1.0, 1.0)
    entities, actions = as_items(item.entities, 'entities'), as_items(item.actions, 'actions')
    for name, values, limit in (('entities', entities, MAX_ENTITIES), ('actions', actions, MAX_ACTIONS)):
        if len(values) > limit:
            msg = f'{len(values)} {name} in one observation, more than the {limit} allowed'
            raise InvalidInputError(msg)
    given = tuple(_entity(e) for e in entities)
    given_actions = tuple(check_text(a, 'action', max_bytes=NAME_BYTES, required=True).lower()  # type: ignore[arg-type]
                          for a in actions)
    return CheckedObservation(text, episode, src, utype, when, importance, valence, given, given_actions)


def _entity(value: object) -> Entity:
    """A given entity: a name, or an Entity whose name is checked like one."""
    if isinstance(value, Entity):
        name = check_text(value.name, 'entity', max_bytes=NAME_BYTES, required=True)
        return value if name == value.name else Entity(name, value.type, value.attributes)
    return Entity(check_text(value, 'entity', max_bytes=NAME_BYTES, required=True))  # type: ignore[arg-type]


Checked = tuple[int, ObservationInput, CheckedObservation]  # position in the batch, item, checked


def check_batch(items: Sequence[object], *, max_bytes: int, now: float, future_s: float
                ) -> tuple[list[BrainMemError | None], list[Checked]]:
    """Each item of a batch checked on its own: the error of each refused one (by
    position) and the checked others, with their positions.

    A batch is checked whole before any text is parsed: one text over the limit (or not
    UTF-8) reached the parser's batch call and failed every item with it.
    """
    errors: list[BrainMemError | None] = [None] * len(items)
    checked: list[Checked] = []
    for i, item in enumerate(items):
        try:
            if not isinstance(item, ObservationInput):
                msg = f'item {i} is a {type(item).__name__}, not an ObservationInput'
                raise InvalidInputError(msg)
            checked.append((i, item, check_observation(item, max_bytes=max_bytes, now=now,
                                                        future_s=future_s)))
        except BrainMemError as exc:
            errors[i] = exc
    return errors, checked
