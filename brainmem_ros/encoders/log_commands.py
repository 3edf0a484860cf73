"""State changes a robot's own action log states: its steps, one per ``;`` or ``|`` field.

Task executors log what they did as a verb and its arguments, not as sentences:
``place laundry_basket -> dryer top``, ``nav: arrived hallway; placed wallet ->
kitchen_drawer``, ``moved house_keys: bowl -> hallway_drawer``, ``pick phone_silver; place
-> charging_dock kitchen``, ``grasp toolbox: ok``, ``obj laundry_basket @ bedroom_2 floor``.
A dependency parse of such a line finds no verb and no place. This reads each step:

- a verb of putting (``place``, ``put``, ``drop``, ``move`` ...) with a thing and an arrow
  (``->``, ``=>``) or ``@`` before a place: the thing is there (from the place before a
  second arrow: ``moved X: A -> B``); with no thing, the thing taken last in the line is;
- a verb of taking (``pick``, ``grasp``, ``grab`` ...) with a thing: it is held;
- a thing, ``@`` and a place (``obj toolbox @ garage``, ``[det] mug 0.93 @ sink | ...``): the
  thing is there;
- a call that says it is done (``task place(drill, closet_shelf) ok``); an order or a plan
  (``cmd recv: move(towel, laundry)``, ``plan: bring(toolbox, kitchen)``) is not;
- an attribute path (``cup_green.location = drying_rack``, ``oven.power = off``).

A step that reports a failure, a rejection or a plan (``grasp toolbox: failed``) states
nothing; the thing and the place are named as
:class:`~brainmem_ros.encoders.record_names.RecordNames` names them.
"""

from __future__ import annotations

import re

from brainmem_ros.encoders.reading_base import HELD, POWER
from brainmem_ros.encoders.record_fields import ASIDE, PLACE_KEYS, STATE_KEYS, THING_KEYS, role_key
from brainmem_ros.encoders.record_names import RecordNames
from brainmem_ros.memory.types import StateChange

_PUTTING = frozenset({'place', 'placed', 'put', 'drop', 'dropped', 'move', 'moved', 'set', 'stow', 'stowed',
                      'deliver', 'delivered', 'return', 'returned', 'store', 'stored', 'hang', 'hung',
                      'leave', 'left', 'release', 'released', 'push', 'pushed'})
_TAKING = frozenset({'pick', 'picked', 'grasp', 'grasped', 'grab', 'grabbed', 'take', 'took', 'lift',
                     'lifted', 'fetch', 'fetched'})
#: The verbs of an action log's steps: a name after one is the step's thing ("place sponge").
STEP_VERBS = _PUTTING | _TAKING
_FAILED = re.compile(r'\b(?:fail(?:ed|ure)?|error|abort(?:ed)?|timeout|retry|not|no|cannot|unable|rejected|'
                     r'discarded|ignored|cancel(?:l?ed)?|scheduled|planned|pending|queued)\b', re.IGNORECASE)
_ARROW = re.compile(r'\s*(?:->|=>|→|\s@\s)\s*')
# Verbs of handing a thing to someone: the second argument is who has it ("handover(wallet, Sam)").
_GIVING = frozenset({'handover', 'hand', 'handed', 'give', 'gave', 'given'})
_BRINGING = frozenset({'bring', 'brought', 'carry', 'carried', 'fetch', 'take', 'took', 'transport'})
# Marks of an action log line beyond an arrow: several steps, a call, an attribute path.
_MARKED = re.compile(r'[;|]|\w\([^()]*\)|^\s*\w+\.\w+\s*[:=]|^\s*\[\w+\]')
_BRACKETED = re.compile(r'^\[[^\]]*\]\s*')  # "[det] mug 0.93 @ sink"
_FIELD_AFTER = re.compile(r'\s+[A-Za-z_]\w*=\S*.*$')  # "chair conf=0.84 t=12.3"
_CALL = re.compile(r'^(?:[A-Za-z]+\s+)?([A-Za-z]+)\(([^()]*)\)\s*(.*)$')  # "task place(mug, shelf) ok"
_PATH = re.compile(r'^([A-Za-z]\w*)\.([A-Za-z]+)\s*[:=]\s*(\S.*)$')  # "cup_green.location = sink"
_DONE = re.compile(r'\b(?:ok|done|success|succeeded|complete|completed|finished)\b', re.IGNORECASE)
_STEP = re.compile(r'^([A-Za-z]+)\b\s*(.*)$')
# "exec: place sponge -> sink", "/robot/manipulation: grasp(cup) -> SUCCESS"; not "moved keys: bowl -> ..".
# A thing and its place joined by "@" in one word ("keys@hallway_bowl"); no dot after it (an address).
_AT_PAIR = re.compile(r'(?<![\w@.])([A-Za-z][A-Za-z0-9_-]*)@([A-Za-z][A-Za-z0-9_-]*)(?![\w@.])')
_TAG = re.compile(r'^[\w/.-]+:\s+(?=\w+\s|\w+\()')


def commanded(reader: RecordNames, text: str) -> list[StateChange]:
    """The changes the steps of an action log line state (none for prose)."""
    found = _at_pairs(reader, text)
    text = _AT_PAIR.sub(' ', text) if found else text
    if not _ARROW.search(text) and not _MARKED.search(text):
        return found
    taken = ''
    for raw in re.split(r'[;|]', text):
        step = _TAG.sub('', _BRACKETED.sub('', raw.strip()))
        if not step or _FAILED.search(step):
            continue
        called = _called(reader, step)
        if called is not None:
            found += called
            taken = called[0].object if called and called[0].after == HELD else taken
            continue
        parts = _ARROW.split(step)
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
            before = reader.place(source, keyed=True) if source else ''
            # ("backpack @ chair (bedroom) conf=0.84": the place without the fields after it.)
            place = reader.place(ASIDE.sub(' ', _FIELD_AFTER.sub('', parts[-1])), keyed=True)
            if thing and place and place != thing:
                found.append(StateChange(thing, 'location', before, place))
    return found


def _at_pairs(reader: RecordNames, text: str) -> list[StateChange]:
    """Things written at their places in one word each: "inventory: keys@hallway_bowl wallet@desk"."""
    found: list[StateChange] = []
    for name, where in _AT_PAIR.findall(text):
        thing, place = reader.thing(name, keyed=True), reader.place(where, keyed=True)
        if thing and place and place != thing:
            found.append(StateChange(thing, 'location', '', place))
    return found


def _called(reader: RecordNames, step: str) -> list[StateChange] | None:
    """A step written as a call or an attribute path, or None when it is neither: "task
    place(drill, closet_shelf) ok" (done only when the step says so: "cmd recv: move(towel,
    laundry)" is an order), "cup_green.location = drying_rack", "oven.power = off"."""
    path = _PATH.match(step)
    if path:
        thing, key = reader.thing(path.group(1)), role_key(path.group(2).lower())
        value = path.group(3).strip()
        word = value.lower()
        if not thing:
            return []
        if key in PLACE_KEYS:
            place = reader.place(value, keyed=True)
            return [StateChange(thing, 'location', '', place)] if place else []
        if key in STATE_KEYS and word in reader.states:
            return [StateChange(thing, 'power' if word in POWER else 'state', '', word)]
        return []
    call = _CALL.match(step)
    if call is None:
        return None
    verb, raw = call.group(1).lower(), [a.strip() for a in call.group(2).split(',')]
    if not _DONE.search(call.group(3)):
        return []
    # A keyword argument's value is the argument ("Place(pill_cup_B, target=bedside_table)"); a
    # taking verb's keyword arguments say where from ("Pick(pill_cup_B, at=med_trolley_1)").
    args = [a.split('=', 1)[1].strip() if '=' in a else a for a in raw]
    thing = reader.thing(args[0]) if args else ''
    if thing and verb in _TAKING and all('=' in a for a in raw[1:]):
        return [StateChange(thing, 'location', '', HELD)]
    person = args[-1].rsplit(':', 1)[-1].strip() if len(args) >= 2 else ''  # "person:emma", "Sam"
    if thing and verb in _GIVING and person.isalpha():
        return [StateChange(thing, 'location', '', person.lower())]
    place = reader.place(args[-1], keyed=True) if len(args) >= 2 else ''
    if thing and place and verb in _PUTTING | _BRINGING:
        return [StateChange(thing, 'location', '', place)]
    return []
