"""The names of things and places in log records: what a field's words name, if anything.

A record names things as software writes them: identifiers (``watering_can``,
``light.porch``, ``front_porch``), calls (``pick(mug)``), tags before the name
(``DRAWER-CLS left drawer``), counts and codes (``4 glasses``, ``printer 2``). A thing must be
a noun phrase whose head the lexicon knows as a noun (or any head, where a key says the field
names a thing) and which is neither an abstract word, a state word nor a part of the robot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from brainmem_ros.encoders.lexicon import NOUN_TYPES
from brainmem_ros.encoders.reading_base import LOG_LEVELS, PLACE_PREPS
from brainmem_ros.encoders.record_fields import ASIDE, CONFIDENCE, STATE_KEYS, role_key
from brainmem_ros.memory.types import normalise_name

CALL = re.compile(r'^\w+\(([^()]+)\)$')  # "pick(mug)", "cls_door(elevator 1)"
_DOTTED = re.compile(r'^([a-z]+(?:_[a-z]+)*)\.([a-z][a-z0-9]*(?:_[a-z0-9]+)*)$')  # "switch.kitchen_light"
#: Home-automation entity domains ("light.porch", "media_player.tv"): such a dotted id is a
#: record's thing even with no underscore, which a word, a dot and a word in prose lacks only
#: by a typing slip ("the kitchen.then").
ENTITY_DOMAINS = frozenset({
    'alarm_control_panel', 'binary_sensor', 'button', 'camera', 'climate', 'cover', 'device_tracker', 'fan',
    'humidifier', 'input_boolean', 'lawn_mower', 'light', 'lock', 'media_player', 'remote', 'sensor',
    'siren', 'switch', 'vacuum', 'valve', 'water_heater'})
_STATUS_SUFFIX = re.compile(r'(?<=[a-z0-9])_(?:status|state)$')
# A label after a name: a number, a letter with a number, or a capital letter ("shelf C", "bay 4B").
CODE = re.compile(r'^(?:\d+|[A-Z]|[A-Za-z]{0,3}-?\d+[A-Za-z]?(?:-[A-Za-z]{0,3}\d+[A-Za-z]?)*)$')
# (and "drill_DR3", "crate_A17", "tube_S-2231", "rack A-12-02", "PAL-004417")
_NAME_CHARS = re.compile(r"^[\w\s'\"#.%-]+$")
#: Prepositions of place a record writes before a place ("on", "next"...).
RECORD_PLACE_PREPS = (PLACE_PREPS - {'to', 'over'}) | {'next'}
_LEADING = RECORD_PLACE_PREPS | {'a', 'an', 'the', 'its', 'to', 'of', 'top', 'front', 'in'}
# A message topic at the end of a field, quoted or before its payload's brace.
_TOPIC = re.compile(r'''['"]?([\w-]+(?:/[\w-]+)+)['"]?\s*\{?$''')
# A name in quotes after a word or two of its kind ("Switch 'Hallway Light'").
_QUOTED_NAME = re.compile(r'''^(?:[A-Za-z]+\s+){1,2}['"]([^'"]+)['"]$''')
_CAMEL = re.compile(r'(?<=[a-z])(?=[A-Z][a-z])')  # words run together: "LivingRoom"
_WATCHING = frozenset({'contact', 'sensor'})  # a sensor named after what it watches
# Device kinds that control another thing, which their name names.
_CONTROLS = frozenset({'switch', 'plug', 'outlet', 'relay', 'socket'})
# A side before a thing's noun, which as a state word would say something else ("right").
_HANDS = frozenset({'left', 'right'})
# Verbs of seeing before a thing's name ("found car_keys at=hallway_console").
_SIGHTED = frozenset({'found', 'seen', 'saw', 'spotted', 'detected', 'located', 'observed', 'noticed'})


def entity_id(text: str) -> bool:
    """``text`` is a home-automation entity id ("vacuum.robot_vac"), whose value is its state."""
    return bool(_DOTTED.match(text.strip().rstrip(':')))


class RecordNames:
    """Names things and places in a record's fields (see the module)."""

    def __init__(self, nouns: frozenset[str], stop: frozenset[str], states: frozenset[str],
                 self_vocab: frozenset[str]) -> None:
        self.nouns = nouns
        self.stop = stop
        self.states = states
        self.self_vocab = self_vocab

    @staticmethod
    def unquoted(text: str) -> str:
        """The name in quotes after a word or two of its kind ("Item 'Kitchen_Light'"), else ``text``."""
        named = _QUOTED_NAME.match(text.strip())
        return named.group(1) if named else text

    def topic_of(self, fields: Iterable[tuple[str | None, str]]) -> str:
        """The thing named by a message topic at the end of a field with no key (a payload
        follows: "MQTT publish: topic 'zigbee2mqtt/desk_lamp', payload '{...}'"), or ''."""
        paths = (m[1] for k, v in fields if k is None and (m := _TOPIC.search(v)))
        return next((t for p in paths if (t := self.topic_thing(p))), '')

    def topic_thing(self, path: str) -> str:
        """The thing a message topic names ("home/garage/door/state"): its last level (after a
        state key), named with the level before it (its room)."""
        levels = [p for p in path.strip('/').split('/') if p]
        if levels and role_key(levels[-1]) in STATE_KEYS:
            levels.pop()
        if not levels:
            return ''
        return self.tail_thing(' '.join(levels[-2:]).replace('_', ' ')) \
            or self.tail_thing(levels[-1].replace('_', ' '))

    def tail_thing(self, text: str) -> str:
        """The thing ``text`` names after a software tag ("DRAWER-CLS left drawer" -> left
        drawer, "track#14 'backpack'" -> backpack): leading words that are no plain words
        (capitals, digits or marks in them) are dropped."""
        call = CALL.match(text.strip())
        if call:
            return self.thing(call.group(1))
        named = self.unquoted(text)
        if named != text and (thing := self.thing(named)):
            return thing  # "Switch 'Hallway Light'", "Contact sensor 'Back Door'": the name
        words = text.split()
        while len(words) > 1 and not (words[0].isalpha() and not words[0].isupper()):
            words.pop(0)
        return self.thing(' '.join(words))

    def thing(self, text: str, *, keyed: bool = False) -> str:
        """``text`` as the name of a thing, or '' when it is not one (see the module).

        ``keyed``: the field's key says it names a thing or a place ("loc: nightstand"),
        so a head the lexicon does not know is taken too.
        """
        text = text.strip().rstrip(':')  # "door_front: state=closed": the tag of the fields after it
        call = CALL.match(text)
        if call:
            text = call.group(1)
        if dotted := _DOTTED.match(text):  # "light.porch" (the porch light), "lock.front_door"
            kind, name = dotted.groups()
            name = _STATUS_SUFFIX.sub('', name)  # "sensor.ev_charger_status": the EV charger
            where = NOUN_TYPES.get(name.replace('_', ' ')) == 'place' or all(
                NOUN_TYPES.get(w) == 'place' for w in name.split('_'))
            # A device kind names the thing unless its name ends in a device of its own:
            # "light.hallway_ceiling" is the hallway ceiling light, "light.floor_lamp" a lamp.
            # (Not a switch or a plug: "switch.garden_sprinkler" is the sprinkler.) A name of
            # places alone is where the device is: "climate.living_room".
            # Its number is no word of it ("light.kitchen_lamp_02" is a lamp).
            last = next((w for w in reversed(name.split('_')) if not CODE.match(w)), '')
            device = NOUN_TYPES.get(kind) == 'appliance' != NOUN_TYPES.get(last) \
                and kind not in _CONTROLS and kind in self.nouns
            text = f'{name}_{kind}' if where or device else name
        if not _NAME_CHARS.match(text):
            return ''
        watched = text.split()
        if len(watched) == 2 and watched[0].lower().endswith('_sensor') \
                and NOUN_TYPES.get(watched[1].rsplit('_', 1)[-1].lower()) not in (None, 'place'):
            text = watched[1]  # "door_sensor front_door": the door the sensor watches
        if ' ' not in text:
            text = _CAMEL.sub(' ', text)  # "FrontDoor_Contact", "LivingRoom"
        words = [w.strip('\'"#.,') for w in text.replace('_', ' ').split()]
        words = [w for w in words if w]
        if len(words) > 1 and words[-1].lower() in _WATCHING and NOUN_TYPES.get(words[-2].lower()):
            words.pop()  # "front door contact", "window sensor": the thing watched
        while words and CONFIDENCE.match(words[-1]):
            words.pop()
        while len(words) > 1 and (words[0].lower() in _SIGHTED or words[0] in LOG_LEVELS):
            words.pop(0)  # "found car_keys", "ALERT garage door"
        while words and ((words[0].lower() in self.stop and words[0].lower() in self.nouns
                          and not _identifier(text)) or words[0].isdigit()):
            words.pop(0)  # "object 'kettle'": a vague noun before the name; "4 glasses": a count
        if not words or len(words) > 4 or not all(w.isalpha() or CODE.match(w) for w in words):
            return ''
        head_at = len(words) - 1
        while head_at > 0 and CODE.match(words[head_at]):
            head_at -= 1  # "printer 2", "bed 4", "pallet 07", "bin R4 S2"
        lowered = [w.lower() for w in words]
        head = self._singular(lowered[head_at])
        # A state word heads no thing ("drawer closed"), bar a noun named with another
        # word ("porch light").
        stated = head in self.states and not (head in self.nouns and head_at > 0)
        # An identifier's words are one name ("watering_can"): none of them is a function word.
        stop = frozenset() if _identifier(text) else self.stop
        if not head.isalpha() or (head not in self.nouns and not keyed) or head in stop or stated \
                or any((w in self.states and w not in _HANDS) or w in stop for w in lowered[:head_at]):
            return ''
        name = normalise_name(' '.join([*lowered[:head_at], head, *lowered[head_at + 1:]]))
        # The robot's own parts, named in the singular and alone: "batteries" in a drawer and
        # a "sofa arm" are things.
        alone = name in self.self_vocab or (head in self.self_vocab and head_at == 0)
        own = alone and lowered[head_at] == head
        return '' if own else name

    def place(self, text: str, *, keyed: bool = False) -> str:
        """The place a field's value names: its first noun phrase, without the preposition
        before it ("under the window in the bedroom" -> window, "bowl by the door" -> bowl)."""
        prep, _, inner = text.rsplit('/', 1)[-1].strip().replace('_', ' ').partition(' ')
        if '/' in text and prep.lower() in RECORD_PLACE_PREPS and inner:
            text = inner  # where in the outer place: "classroom_2B/under_desk_7" is desk 7
        text = text.replace('/', ' ')  # a path of places, outer first: "garage/shelf_B"
        if _identifier(text) and (whole := self.thing(text, keyed=keyed)):
            return whole  # an identifier names its place whole ("front_porch", "top_shelf")
        words = [w.strip('\'".,') for w in ASIDE.sub(' ', text).replace('_', ' ').split()]
        words = [w for w in words if w]
        while words and words[0].lower() in _LEADING:
            words.pop(0)
        phrase: list[str] = []
        for word in words:
            if word.lower() in _LEADING - {'top', 'front'}:
                break
            phrase.append(word)
        return self.thing(' '.join(phrase), keyed=keyed) if phrase else ''

    def _singular(self, word: str) -> str:
        if word in self.nouns or not word.endswith('s'):
            return word
        # ("kids" is a kid, not a "ki"; "boxes" a box)
        es = word[:-2] if word.endswith('es') else ''
        for stem in (word[:-3] + 'y' if word.endswith('ies') else '', es, word[:-1]):
            if stem and stem in self.nouns:
                return stem
        return word


def _identifier(text: str) -> bool:
    """A software identifier ("watering_can", "front_porch"): words joined by underscores."""
    text = text.strip()
    return '_' in text and ' ' not in text

