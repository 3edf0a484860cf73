"""A log record cut into fields: the first step of reading it (:mod:`log_records`).

A record is cut at separators (``|``, ``;``, ``>>``, ``, ``, tabs, wide gaps, a sentence's
end) and at ``key=value`` and quoted ``"key": "value"`` / ``key="value"`` pairs. Boxes,
coordinates, ranges and ``(p=0.93)`` are dropped; a lone confidence in brackets ("TV
(0.95)") is kept as a word, since it marks what was detected. A key names a role (the
thing, its place, state, battery level or a measure) when it is one of the role keys or
one typing slip away from a long one ("stauts").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

Field = tuple[str | None, str]

# "key": "value" or a number or truth value (JSON), and key="value" (XML attributes).
_QUOTED = re.compile(r'"([A-Za-z_]+)"\s*:\s*(?:"([^"]*)"|(-?\d+(?:\.\d+)?|true|false)\b)'
                     r'|\b([A-Za-z_]+)="([^"]*)"')
_VALUE_KEYS = frozenset({'state', 'value'})
_OPENING = re.compile(r'"([A-Za-z_]+)"\s*:\s*\{$')  # the key of the object a brace opens
_ELEMENT = re.compile(r'<([A-Za-z_]+)>([^<>]*)</\1>')  # XML: "<door>closed</door>"
_TAG = re.compile(r'^\s*\[[^\[\]]*\]\s*')  # "[seg] towel", "[INFO] [nav2]"
# Lines of their own (YAML, a multi-line entry) are fields too.
_SPLIT = re.compile(r'\s*(?:\||;|>>|\t|\n|\s{3,}|,\s+|\s-\s|\s{2,}(?=[A-Za-z]+:)|\.\s+(?=[A-Z]))\s*')
_KEY_VALUE = re.compile(r'([A-Za-z_]\w*)=(.+?)(?=\s+[A-Za-z_]\w*=|$)')
_SPACED_EQUALS = re.compile(r'\s+=\s+')  # "front door = CLOSED": a thing and its state
# "key: value"; a colon between digits is a clock's ("turned on at 22:10"), no separator.
COLON = re.compile(r'^((?:[^:]|(?<=\d):(?=\d)){1,40}?)\s*(?:(?<!\d):|:(?!\d))\s*(.+)$')
ASIDE = re.compile(r'(?<!\w)\([^()]*\)')  # not a call's argument: "pick(mug)"
# A confidence, score or probability: "0.91", ".87", "93%".
CONFIDENCE = re.compile(r'^(?:[01]?\.\d+|\d{1,3}(?:\.\d+)?\s?%)$')
# Brackets holding numbers only (boxes, coordinates, ranges) or key=value pairs.
_BRACKETED = re.compile(r'\(([^()]*)\)|\[([^\[\]]*)\]')
_NUMERIC = re.compile(r'^[\d\s.,:;%+\-]*$')

# Keys by the role of their value.
THING_KEYS = frozenset({'obj', 'object', 'label', 'class', 'cls', 'class_name', 'category', 'item', 'name',
                        'thing', 'device', 'appliance', 'entity', 'entity_id', 'subject', 'id', 'tag',
                        'tool', 'dev', 'artifact', 'asset', 'product', 'package', 'parcel', 'payload',
                        'cargo', 'pallet', 'tote', 'container', 'sample', 'specimen'})
#: Keys whose value is the person who has the thing ("holder=Marcus", "delivered_to=Tom").
HOLDER_KEYS = frozenset({'holder', 'held_by', 'carried_by', 'delivered_to', 'handed_to', 'given_to',
                         'recipient'})
#: Keys of a thing's colour, which tells it from others of its kind ("label=mug color=blue").
COLOUR_KEYS = frozenset({'color', 'colour'})
# A pose's frame is where a thing is ("frame=kitchen_counter"), unless it is a reference
# frame of the whole map (REFERENCE_FRAMES); a robot vacuum's "segment" is the room it cleans.
PLACE_KEYS = frozenset({'loc', 'location', 'surface', 'on', 'at', 'in', 'place', 'room', 'area',
                         'zone', 'where', 'target', 'region', 'dst', 'dest', 'destination', 'frame',
                         'frame_id', 'segment'})
REFERENCE_FRAMES = frozenset({'map', 'odom', 'world', 'earth', 'base_link', 'base_footprint'})
#: Keys of what a detector saw, a thing or a person ("det": "keys", "person=Sam"): the record's
#: thing when no thing key names one.
DETECTION_KEYS = frozenset({'det', 'detection', 'detected', 'person', 'human'})
#: Keys of whose a thing is ("owner_tag": "anna": Anna's keys).
OWNER_KEYS = frozenset({'owner', 'owner_tag', 'owned_by', 'belongs_to'})
#: Keys that say, true or false, whether the robot's gripper holds the thing.
GRIPPED_KEYS = frozenset({'in_gripper', 'in_hand', 'grasped', 'gripped', 'attached'})
#: Keys whose value is what the robot's gripper holds ("holding=green_cup").
HOLDING_KEYS = frozenset({'holding', 'held', 'held_object', 'grasped_object'})
STATE_KEYS = frozenset({'state', 'status', 'power', 'pred', 'prediction', 'new_state', 'hvac_mode', 'run'})
BATTERY_KEYS = frozenset({'batt', 'battery', 'charge', 'soc', 'battery_level', 'battery_percentage'})
MEASURES = {'temp': 'temperature', 'temperature': 'temperature', 'humidity': 'humidity',
            'current_temp': 'temperature', 'current_temperature': 'temperature',
            'setpoint': 'setting', 'set_point': 'setting', 'target_temp': 'setting',
            'target_temperature': 'setting', 'fill': 'level', 'fill_level': 'level', 'brightness': 'level',
            'level': 'level'}
ROLE_KEYS = THING_KEYS | PLACE_KEYS | STATE_KEYS | BATTERY_KEYS | set(MEASURES) | HOLDER_KEYS | COLOUR_KEYS \
    | OWNER_KEYS | GRIPPED_KEYS | {'from', 'to', 'rel', 'relation', 'attribute'}


# A person a field names: "user:Aroha" (any case), or a bare capitalised name ("Marcus").
_PERSON_TAGGED = re.compile(r"^(?:user|person|human|resident|guest):\s*([A-Za-z][A-Za-z'-]*)$", re.IGNORECASE)
_PERSON_NAME = re.compile(r"^([A-Z][a-z]+(?:['-][A-Za-z]+)?)$")


def person(value: str, *, bare: bool = True) -> str:
    """The person ``value`` names, lower-cased ('' if none); a bare name counts when ``bare``
    (a holder field's "Marcus"), not where a bare word is as likely a place (a task's "to")."""
    value = value.strip()
    found = _PERSON_TAGGED.match(value) or (_PERSON_NAME.match(value) if bare else None)
    return found.group(1).lower() if found else ''


# Who or what made a change, after its state: "unlocked by Alice", "turned off by automation".
_AGENT = re.compile(r'\s+by\s+.*$', re.IGNORECASE)


def done_by(value: str, states: frozenset[str]) -> str:
    """``value`` without who made the change it states ("front_door unlocked by Alice": "front_door
    unlocked"), if a state word comes before the "by" ("left by the door": a place)."""
    words = _AGENT.sub('', value).split()
    return ' '.join(words) if words and words[-1].lower() in states else value


#: Keys that name a kind of place, whose value is its label ("bin=R4-S2", "compartment=C2").
PLACE_NOUN_KEYS = frozenset({'bin', 'slot', 'compartment', 'shelf', 'rack', 'bay', 'dock', 'station', 'aisle',
                             'locker', 'drawer', 'tray', 'cabinet', 'cell'})
_LABEL = re.compile(r'^(?:[A-Za-z]?\d[\w-]*|[A-Za-z]{1,2}\d*(?:-[A-Za-z]?\d+)*)$')


def keyed_field(key: str, value: str) -> Field:
    """A field under its role key (:func:`role_key`); a label under a kind of place is that
    place ("bin=R4-S2": the location "bin R4-S2")."""
    if key.lower() in PLACE_NOUN_KEYS and _LABEL.match(value.strip()):
        return 'location', f'{key.lower()} {value.strip().replace("-", " ")}'  # "bin R4 S2"
    return role_key(key), value


# Keys whose value names the field after them ("event=power value=on": power=on).
_NAMING_KEYS = frozenset({'event', 'param', 'property', 'metric', 'signal'})


def named_values(fields: tuple[Field, ...]) -> tuple[Field, ...]:
    """``fields`` with a "value" under the role key the field before it names ("event=power
    value=on" is power=on, "metric=temp value=21" temp=21)."""
    out = list(fields)
    for i in range(len(out) - 1):
        (key, name), (nxt, value) = out[i], out[i + 1]
        named = role_key(name.strip())
        if key in _NAMING_KEYS and nxt == 'value' and named in STATE_KEYS | BATTERY_KEYS | set(MEASURES):
            out[i + 1] = (named, value)
    return tuple(out)


def role_key(key: str) -> str:
    """``key`` as the role key it is, allowing one typing slip in a long one ("stauts"), and
    a word of time before it ("new_location", "current_state": the location, the state)."""
    key = key.lower()
    if key in ROLE_KEYS or key in _CHANGE_KEYS or len(key) < 5:
        return _CHANGE_KEYS.get(key, key)
    when, _, rest = key.partition('_')
    if when in _NOW and rest in ROLE_KEYS:
        return rest
    if when in _CHANGE_KEYS and rest in STATE_KEYS | PLACE_KEYS:
        return _CHANGE_KEYS[when]  # "old_state", "previous_location"
    return next((k for k in ROLE_KEYS if len(k) >= 5 and _one_slip(key, k)), key)


# The two sides of a change by other names ('"old": "closed", "new": "open"').
_CHANGE_KEYS = {'old': 'from', 'prev': 'from', 'previous': 'from', 'new': 'to'}
# Words of time before a role key that leave its role as it is.
_NOW = frozenset({'new', 'current', 'curr', 'cur', 'now', 'latest', 'updated', 'final'})


def _one_slip(a: str, b: str) -> bool:
    """One letter left out, added, changed, or two neighbours swapped."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _unbracket(match: re.Match[str]) -> str:
    inner = (match.group(1) if match.group(1) is not None else match.group(2)).strip()
    if CONFIDENCE.match(inner):
        return f' {inner} '  # "TV (0.95)": the confidence marks what was detected
    if _NUMERIC.match(inner) or '=' in inner:
        return ' '  # a box, coordinates, a range, "(p=0.93)"
    return match.group(0)


def split_fields(text: str) -> Iterator[Field]:
    """(key or None, value) of each field of a record, in order; boxes and coordinates dropped."""
    for quoted in _QUOTED.finditer(text):
        json_key, json_value, json_number, xml_key, xml_value = quoted.groups()
        if json_key in _VALUE_KEYS:
            # '"old_state": {"state": "off"}': the value is the side of the change that holds it.
            holder = _OPENING.search(text, 0, _opening(text, quoted.start()) + 1)
            json_key = holder.group(1) if holder and role_key(holder.group(1)) in {'from', 'to', 'state'} \
                else json_key
        yield (json_key or xml_key), (json_value or json_number or xml_value)
    for tag, inner in _ELEMENT.findall(text):  # "<state>running</state>"
        yield tag, inner.strip()
    text = _ELEMENT.sub(' | ', text)
    rest = _SPACED_EQUALS.sub(': ', _BRACKETED.sub(_unbracket, _QUOTED.sub(' | ', text)))
    # A comma in brackets ("(puddle, 0.84)") does not end the field.
    rest = ASIDE.sub(lambda m: m.group(0).replace(',', ' '), rest)
    for part in _SPLIT.split(rest):
        segment = _TAG.sub('', part).strip(' .!?:')
        if not segment:
            continue
        pairs = list(_KEY_VALUE.finditer(segment))
        head = segment[:pairs[0].start()].strip() if pairs else segment
        if head:
            colon = COLON.match(head)
            if colon and role_key(colon.group(1).strip()) in ROLE_KEYS:
                yield colon.group(1).strip(), colon.group(2).strip()
            else:
                yield None, head
        for pair in pairs:
            yield pair.group(1), pair.group(2).strip().strip('"\'')


def _opening(text: str, at: int) -> int:
    """Where the innermost JSON object holding position ``at`` opens (-1: none)."""
    depth = 0
    for i in range(at - 1, -1, -1):
        if text[i] == '}':
            depth += 1
        elif text[i] == '{':
            if depth == 0:
                return i
            depth -= 1
    return -1
