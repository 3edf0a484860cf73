"""State changes a robot's own action log states: its steps, one per ``;``-separated field.

Task executors log what they did as a verb and its arguments, not as sentences:
``place laundry_basket -> dryer top``, ``nav: arrived hallway; placed wallet ->
kitchen_drawer``, ``moved house_keys: bowl -> hallway_drawer``, ``pick phone_silver; place
-> charging_dock kitchen``, ``grasp toolbox: ok``, ``obj laundry_basket @ bedroom_2 floor``.
A dependency parse of such a line finds no verb and no place. This reads each step:

- a verb of putting (``place``, ``put``, ``drop``, ``move`` ...) with a thing and an arrow
  (``->``, ``=>``) or ``@`` before a place: the thing is there (from the place before a
  second arrow: ``moved X: A -> B``); with no thing, the thing taken last in the line is;
- a verb of taking (``pick``, ``grasp``, ``grab`` ...) with a thing: it is held;
- a thing, ``@`` and a place (``obj toolbox @ garage``): the thing is there.

A step that reports a failure (``grasp toolbox: failed``) states nothing; the thing and the
place are named as :class:`~brainmem_ros.encoders.log_records.RecordReader` names them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from brainmem_ros.encoders.reading_base import HELD
from brainmem_ros.encoders.record_fields import THING_KEYS
from brainmem_ros.memory.types import StateChange

if TYPE_CHECKING:
    from brainmem_ros.encoders.log_records import RecordReader

_PUTTING = frozenset({'place', 'placed', 'put', 'drop', 'dropped', 'move', 'moved', 'set', 'stow', 'stowed',
                      'deliver', 'delivered', 'return', 'returned', 'store', 'stored', 'hang', 'hung',
                      'leave', 'left', 'release', 'released'})
_TAKING = frozenset({'pick', 'picked', 'grasp', 'grasped', 'grab', 'grabbed', 'take', 'took', 'lift',
                     'lifted', 'fetch', 'fetched'})
_FAILED = re.compile(r'\b(?:fail(?:ed|ure)?|error|abort(?:ed)?|timeout|retry|not|no|cannot|unable)\b',
                     re.IGNORECASE)
_ARROW = re.compile(r'\s*(?:->|=>|→|\s@\s)\s*')
_STEP = re.compile(r'^([A-Za-z]+)\b\s*(.*)$')
_TAG = re.compile(r'^\w+:\s+(?=\w+\s)')  # "exec: place sponge -> sink", not "moved keys: bowl -> .."


def commanded(reader: RecordReader, text: str) -> list[StateChange]:
    """The changes the steps of an action log line state (none for prose)."""
    if not _ARROW.search(text) and ';' not in text:
        return []
    found: list[StateChange] = []
    taken = ''
    for raw in text.split(';'):
        step = raw.strip()
        if not step or _FAILED.search(step):
            continue
        parts = _ARROW.split(_TAG.sub('', step))
        verb = _STEP.match(parts[0])
        word = verb.group(1).lower() if verb else ''
        rest = verb.group(2).rstrip(': ') if verb else ''
        if word in _TAKING and len(parts) == 1:
            taken = reader.thing(rest.split(':', 1)[0]) or taken
            found += [StateChange(taken, 'location', '', HELD)] if taken else []
        elif len(parts) >= 2 and (word in _PUTTING or word in THING_KEYS or ' @ ' in step):
            named = rest.split(':', 1)[0] if word in _PUTTING | THING_KEYS else parts[0]
            thing = reader.thing(named) if named.strip() else taken
            source = parts[-2].split(':', 1)[-1] if len(parts) >= 3 or ':' in parts[0] else ''
            before = _place(reader, source) if source else ''
            place = _place(reader, parts[-1])
            if thing and place and place != thing:
                found.append(StateChange(thing, 'location', before, place))
    return found


def _place(reader: RecordReader, text: str) -> str:
    """A step's place: an identifier names it whole ("top_shelf"), a phrase by its first noun."""
    name = text.strip()
    if '_' in name and ' ' not in name:
        return reader.thing(name, keyed=True) or reader.place(name, keyed=True)
    return reader.place(name, keyed=True)
