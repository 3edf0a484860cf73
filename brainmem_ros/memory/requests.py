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
    if radius is not None and not (math.isfinite(radius) and radius > 0):
        msg = f'radius must be a positive number of metres, got {radius!r}'
        raise InvalidInputError(msg)
    parsed_types = frozenset(UnitType.parse(t) for t in types) if types else None
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


def check_observation(item: ObservationInput, *, max_bytes: int) -> CheckedObservation:
    """An observation's fields checked: text, names, type, stamp, ratings, entities, actions."""
    text = check_text(item.text, 'text', max_bytes=max_bytes, required=True)
    episode = check_text(item.episode_id or '', 'episode_id', max_bytes=NAME_BYTES, required=False)
    src = check_text(item.source or '', 'source', max_bytes=NAME_BYTES, required=False)
    utype = UnitType.parse(item.type)
    when = to_seconds(item.stamp, 'stamp')
    importance, valence = item.importance, item.valence
    if importance is not None and not (math.isfinite(importance) and 1.0 <= importance <= 10.0):
        msg = f'importance must be within 1..10, got {importance!r}'
        raise InvalidInputError(msg)
    if valence is not None and not (math.isfinite(valence) and -1.0 <= valence <= 1.0):
        msg = f'valence must be within -1..1, got {valence!r}'
        raise InvalidInputError(msg)
    given = tuple(e if isinstance(e, Entity) else
                  Entity(check_text(e, 'entity', max_bytes=NAME_BYTES, required=True)) for e in item.entities)
    given_actions = tuple(check_text(a, 'action', max_bytes=NAME_BYTES, required=True).lower()
                          for a in item.actions)
    return CheckedObservation(text, episode, src, utype, None if when is None or when <= 0 else when,
                              importance, valence, given, given_actions)


Checked = tuple[int, ObservationInput, CheckedObservation]  # position in the batch, item, checked


def check_batch(items: Sequence[object], *, max_bytes: int
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
            checked.append((i, item, check_observation(item, max_bytes=max_bytes)))
        except BrainMemError as exc:
            errors[i] = exc
    return errors, checked
