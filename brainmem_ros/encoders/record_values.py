"""One value of a record's field read: a thing's state, a battery level or a measure.

The layer of :class:`~brainmem_ros.encoders.log_records.RecordReader` that turns a value it
has found a thing for into state changes: ``state=brewing``, ``batt=54%``, ``temp=96C``,
``fridge_temp=5.2C``, a door sensor's ``contact=false``; the reader decides which field
is whose.
"""

from __future__ import annotations

import re

from brainmem_ros.encoders.lexicon import NOUN_TYPES, participle_states
from brainmem_ros.encoders.log_tasks import CALL_KEYS
from brainmem_ros.encoders.reading_base import DEVICE_KINDS, HELD, PARTIAL, POWER
from brainmem_ros.encoders.reading_measures import IN_PROGRESS
from brainmem_ros.encoders.record_fields import (
    ASIDE,
    BATTERY_KEYS,
    CONFIDENCE,
    HOLDING_KEYS,
    MEASURES,
    ROLE_KEYS,
)
from brainmem_ros.encoders.record_merge import PROCESS_STATES
from brainmem_ros.encoders.record_names import RecordNames, entity_id
from brainmem_ros.memory.entity_names import OPENING_PARTS, entity_key
from brainmem_ros.memory.types import StateChange

_CYCLE = PROCESS_STATES | frozenset(IN_PROGRESS.values())  # an appliance's: "finished", "running"
# What software writes where it has no value: no state of the thing.
_NO_VALUE = frozenset({'unavailable', 'unknown', 'none', 'null', 'nan', 'undefined'})
ARROW = re.compile(r'\s*(?:->|=>|→)\s*')
_READING = re.compile(r'^([-+]?\d+(?:[.,]\d+)?)\s?(%|[A-Za-z°]{1,3})?$')
_PERCENT = re.compile(r'\d+(?:[.,]\d+)?\s?%')
# Things that open and close, never switch: a sensor's "on" and "off" for one are open and closed.
_OPENINGS = frozenset({'door', 'window', 'gate', 'hatch', 'lid', 'shutter', 'skylight'})
_DOMAIN = re.compile(r'^[a-z_]+\.(?=[a-z])')  # an entity id's domain: "sensor." of "sensor.fridge_temp"


class RecordValues(RecordNames):
    """States, levels and measures of a record's values (see the module)."""

    def _reading(self, key: str, value: str, holder: str) -> list[StateChange]:
        """A battery level ("batt=54%", "battery=0.23 (23%)"), a thing's measure ("temp=96C") or
        a contact sensor's reading."""
        if key == 'contact' and holder and value.lower() in {'true', 'false'}:  # a door sensor's magnet
            return [StateChange(holder, 'state', '', 'closed' if value.lower() == 'true' else 'open')]
        if key in BATTERY_KEYS:
            level = _PERCENT.search(value) or _READING.match(value.strip())
            got = ' '.join(level.group(0).replace('%', ' %').split()) if level else ''  # as parsed: "87 %"
            # A device's own battery ("vacuum.roborock battery=80"); else, or a dock's, the robot's.
            own = holder if holder and self._kind(holder) in DEVICE_KINDS and holder[-4:] != 'dock' else ''
            return [StateChange(f'{own} battery'.lstrip(), 'level', '', got)] if got else []
        if key in MEASURES and holder and _READING.match(value.strip()):
            return [StateChange(holder, MEASURES[key], '', value.strip())]
        if measured := self._measured(key, value):
            return measured
        if key in HOLDING_KEYS and value.strip().lower() not in _NO_VALUE:
            # "holding=green_cup": the gripper holds it.
            return [StateChange(t, 'location', '', HELD) for t in [self.thing(value, keyed=True)] if t]
        thing = self.thing(key) if key not in ROLE_KEYS | CALL_KEYS else ''
        if thing == 'lock' and holder:
            return self._state(holder, value)  # "front_door lock=unlocked": the door is unlocked
        if thing in OPENING_PARTS and holder:
            thing = f'{holder} {thing}'  # "appliance=dishwasher door=open": the dishwasher's door
        own, _, suffix = key.rpartition('_')
        if own and suffix in {'state', 'status'} and (named := self.thing(own)):
            return self._state(named, value, keyed=True)  # "gripper_state=closed": the gripper's
        # A home-automation entity's value is its state, whatever the word ("vacuum.robot_vac:
        # cleaning").
        return self._state(thing, value, keyed=entity_id(key)) if thing else []

    def _measured(self, name: str, value: str) -> list[StateChange]:
        """A reading of the thing a name's last word measures: "fridge_temp=5.2C",
        "sensor.fridge_temperature: 4.2 °C" (the fridge's temperature)."""
        dotted = _DOMAIN.sub('', self.unquoted(name).strip())  # (and "Item 'LivingRoom_Temperature'")
        thing, _, measure = dotted.replace(' ', '_').rpartition('_')
        if measure.lower() not in MEASURES or not _READING.match(value.strip()):
            return []
        holder = self.thing(thing, keyed=True)
        return self._reading(measure.lower(), value, holder) if holder else []

    def _state(self, thing: str, value: str, *, keyed: bool = False, process: bool = False
               ) -> list[StateChange]:
        """``thing`` is in the state ``value`` names (the last of "closed->open"); ``keyed``: any word
        under a state key ("state=brewing"), else a state word; ``process``: also a word of a
        task's progress ("finished")."""
        words = ARROW.split(ASIDE.sub(' ', value).strip())[-1].split()
        while words and CONFIDENCE.match(words[-1]):
            words.pop()  # "OPEN conf=0.88" (its key is gone), "closed 0.99"
        if len(words) != 1:
            return []
        word = words[0].lower().strip('.!"\'')
        if word == HELD:
            return [StateChange(thing, 'location', '', HELD)]
        degree, _, state = word.replace('-', '_').partition('_')
        if degree in PARTIAL and state in self.states and state not in POWER:
            return [StateChange(thing, 'state', '', f'{degree} {state}')]  # "pred=half_open"
        if keyed and '_' in word and word.replace('_', '').isalpha():
            word = word.replace('_', ' ')  # "state=fan_only": fan only
        named = (keyed and word.replace(' ', '').isalpha() and word not in ROLE_KEYS | _NO_VALUE) or (
            process and word in _CYCLE)
        if (word not in self.states and not named) or (word in PROCESS_STATES and not process):
            return []
        if word in POWER and thing.endswith(' power'):
            thing = thing.removesuffix(' power')  # "Item 'CoffeeMachine_Power' changed from OFF to ON"
        if word in POWER and entity_key(thing).rsplit(' ', 1)[-1] in _OPENINGS:  # (of "window kitchen" too)
            # A door is not switched: a door sensor's "on" is open ("binary_sensor.back_door: on").
            return [StateChange(thing, 'state', '', 'open' if word == 'on' else 'closed')]
        # "door_front: opened" is open, as "opened the front door" reads.
        value = participle_states().get(word, word)
        return [StateChange(thing, 'power' if word in POWER else 'state', '', value)]

    def _kind(self, name: str) -> str | None:
        """The household kind of the thing ``name`` names or heads (``NOUN_TYPES``: "washing
        machine", "fridge"), or None."""
        head = name.rsplit(maxsplit=1)[-1]
        return NOUN_TYPES.get(name) or NOUN_TYPES.get(head) or NOUN_TYPES.get(self._singular(head))
