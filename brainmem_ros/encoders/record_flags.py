"""Flags: a field named by a state and set true or false.

Controllers and their bridges report a state as a named boolean: a PLC tag
``WalkIn_Freezer.Door_Closed | TRUE -> FALSE``, a key ``door_closed=false``, a JSON member
``"cabinet_locked": true``. The name ends with the state and begins with the thing; true says
the thing is in that state, false that it is in the opposite one, when the state has one
("closed" false is open, "locked" false unlocked, "on" false off), and says nothing when it
has none ("full" false is not empty).
"""

from __future__ import annotations

import re

from brainmem_ros.encoders.lexicon import participle_states, state_words
from brainmem_ros.encoders.reading_base import POWER
from brainmem_ros.encoders.record_values import ARROW
from brainmem_ros.memory.types import StateChange

Field = tuple[str | None, str]

_TRUE = frozenset({'true', 'yes', '1'})
_FALSE = frozenset({'false', 'no', '0'})
# What a flag's name is made of: words joined by "_", "." or "-", or run together ("WalkIn").
_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9]*(?:[._-][A-Za-z0-9]+)+$')
_WORD_BREAK = re.compile(r'[._-]+|(?<=[a-z])(?=[A-Z])')
# Words before the state that only say it is one ("is_locked", "has_power").
_ASKING = frozenset({'is', 'has'})
# States whose opposite is another word; "un-" makes the rest ("locked": "unlocked").
_OPPOSITES = {'open': 'closed', 'closed': 'open', 'on': 'off', 'off': 'on', 'running': 'stopped',
              'stopped': 'running'}
# Flag words of a machine's motion, the state they mean when true ("Conveyor_Wash.Run").
_MOTION = {'run': 'running', 'running': 'running', 'stop': 'stopped', 'stopped': 'stopped'}


def flag_value(value: str) -> bool | None:
    """True or False for a flag's value (the last side of "TRUE -> FALSE"), else None."""
    last = ARROW.split(value.strip())[-1].strip().lower()
    return True if last in _TRUE else False if last in _FALSE else None


def flagged(fields: tuple[Field, ...]) -> tuple[Field, ...]:
    """``fields`` with a keyless flag name and the keyless value after it joined as one field
    ("WalkIn_Freezer.Door_Closed", "TRUE -> FALSE"): the name is the key."""
    out: list[Field] = []
    i = 0
    while i < len(fields):
        key, value = fields[i]
        if key is None and i + 1 < len(fields) and fields[i + 1][0] is None \
                and flag_value(fields[i + 1][1]) is not None and flag_change(value.strip(), fields[i + 1][1]):
            out.append((value.strip(), fields[i + 1][1]))
            i += 2
            continue
        out.append((key, value))
        i += 1
    return tuple(out)


def flag_change(name: str, value: str, holder: str = '') -> list[StateChange]:
    """The change a flag states: its thing (the words of ``name`` before the state, else
    ``holder``) in the state it ends with, or in the opposite state when false."""
    truth = flag_value(value)
    if truth is None or not _NAME.match(name.strip()):
        return []
    words = [w.lower() for w in _WORD_BREAK.split(name.strip()) if w]
    last = words.pop()
    if last in _MOTION:
        state = _MOTION[last]
    elif last in state_words() or last in POWER:
        state = participle_states().get(last, last)
    else:
        return []
    if not truth:
        state = _opposite(state)
    thing = ' '.join(w for w in words if w not in _ASKING) or holder
    if not state or not thing:
        return []
    return [StateChange(thing, 'power' if state in POWER else 'state', '', state)]


def _opposite(state: str) -> str:
    if state in _OPPOSITES:
        return _OPPOSITES[state]
    words = state_words()
    if state.startswith('un') and state[2:] in words:
        return state[2:]
    return f'un{state}' if f'un{state}' in words else ''
