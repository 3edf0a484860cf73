"""State changes that log records state: the fields and thing-state pairs software prints.

Perception and navigation stacks report in rows of fields, not sentences: ``det: cup 0.88 |
bbox [..] | surface: dining table``, ``TV: OFF | microwave: ON``, ``fire door 3 status=OPEN``,
``{"object": "window", "from": "closed", "to": "open"}``, ``<det class="fire door"
state="blocked"/>``. A dependency parse of such a line joins unrelated fields into one
sentence, and what it reads there is mostly wrong. This reads the record itself:

- the line is cut into **fields** at separators and at ``key=value`` and quoted pairs
  (:mod:`brainmem_ros.encoders.record_fields`);
- a field whose key names a role says what its value is: the **thing** the record is about
  (``object``, ``label``, ``class``...), its **place** (``loc``, ``surface``, ``on``...), its
  **state** (``state``, ``status``), a **battery** level or a **measure** (``temp=96C``); a
  key one typing slip away from a role key counts as it (``stauts``);
- the record's thing is otherwise the first thing given with a detection confidence
  (``mug 0.91``, ``TV (0.95) in living room``: a place phrase after it is where it is), or
  a field that is just a thing;
- a thing followed by a state word (``TV: OFF``, ``bed 4 = EMPTY``, ``ward door -> OPEN``,
  ``window OPEN``) is that thing's state; ``mug held`` is held; ``X moved: A -> B`` is at B;
  a thing with a measure (``room 204 temp 17 C``) has that reading.

A thing must be a noun phrase whose head the lexicon knows as a noun and which is neither
an abstract word, a state word nor a part of the robot. Nothing is read from a line with no
mark of a record (prose is the parser's), and nothing that the line does not say.
"""

from __future__ import annotations

import re
from functools import lru_cache

from brainmem_ros.encoders.lexicon import NOUN_TYPES
from brainmem_ros.encoders.log_commands import STEP_VERBS
from brainmem_ros.encoders.log_tasks import CALL_KEYS, task_changes, undone
from brainmem_ros.encoders.reading_base import DEVICE_KINDS, HELD, POWER
from brainmem_ros.encoders.record_fields import (
    ASIDE,
    BATTERY_KEYS,
    COLON,
    COLOUR_KEYS,
    CONFIDENCE,
    DETECTION_KEYS,
    GRIPPED_KEYS,
    HOLDER_KEYS,
    MEASURES,
    OWNER_KEYS,
    PLACE_KEYS,
    PLACE_NOUN_KEYS,
    REFERENCE_FRAMES,
    STATE_KEYS,
    THING_KEYS,
    Field,
    done_by,
    keyed_field,
    named_values,
    person,
    role_key,
    split_fields,
)
from brainmem_ros.encoders.record_flags import flag_change, flagged
from brainmem_ros.encoders.record_names import ENTITY_DOMAINS, RECORD_PLACE_PREPS, entity_id
from brainmem_ros.encoders.record_values import ARROW, RecordValues
from brainmem_ros.memory.entity_names import OPENING_PARTS
from brainmem_ros.memory.types import StateChange, normalise_name

# Marks of a record: a separator, a key=value pair, an arrow, a "key: value" field, a bracket,
# a word in capitals or a measure's key before its number ("temp 21 C"). Prose has none.
_RECORD = re.compile(r'[|={}<>\[\]]|->|→|:\s|\s-\s|\w;\w|\b[A-Z]{2,}\b|(?i:\bstat(?:e|us) changed to\b)|'
                     r'(?i:\b(?:temp|batt|battery|humidity)\s*[:=]?\s*[-+]?\d)|'
                     r'\b[a-z]{2,}(?:_[a-z]+)*\.[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|'  # "switch.garden_sprinkler"
                     rf'\b(?:{"|".join(sorted(ENTITY_DOMAINS))})\.[a-z][a-z0-9]*\b')  # "light.porch"
_QUOTED_PROSE = re.compile(r'"([^"]{8,})"')
_TAGGED_PROSE = re.compile(r'^\s*([\w\[\]().,=<>-]+):\s+(.+)$')  # "VLM: ...", "vlm_diff(t0): ..."
# A field that denies or doubts what it names.
_DENIED = re.compile(r'\b(?:no|not|none|never|rejected|discarded|ignored|lost|missing|expected|should|'
                     r'failed|unknown|searching|looking)\b', re.IGNORECASE)
_VERDICT = re.compile(r'(?:rejected|discarded|ignored|lost|missing|failed|not found)\b', re.IGNORECASE)
_WORDS_ID = re.compile(r'^\s*[A-Za-z]+(?:_[A-Za-z]+)+\s*$')
_STAMPS = re.compile(r'^(?:\S*\d\S*\s+)+')  # leading words with digits: time stamps, frame and track ids
_YES = frozenset({'true', 'yes', '1'})
_MAX_NESTING = 8  # fields within a field ("tag: thing: state") are read at most this deep
# Words between a thing and its state in a telegraphic line: the state holds.
_LINKING = frozenset({'left', 'still', 'now', 'is', 'was', 'are', 'were', 'remains', 'stays', 'kept',
                      'turned', 'switched', 'been'})
# A relation of a scene-graph edge (``rel=next_to target=X``): where a thing is.
_PLACE_RELATIONS = frozenset({'on', 'in', 'at', 'inside', 'under', 'near', 'next to', 'beside', 'behind',
                              'above', 'below', 'against', 'by'})
# A thing switched on or off, however the line goes on: "switch.sprinkler turned on by schedule".
_SWITCHED = re.compile(r'^(.+?)\s+(?:was\s+|got\s+)?(?:turned|switched|powered)\s+(on|off)\b', re.IGNORECASE)
# Verbs of a thing coming to rest somewhere, in a record's telegraphic past: "pallet_07 dropped
# at dock door 5", "backpack APPEARED at bench", "mug_blue moved from sink to drying_rack".
_ARRIVING = re.compile(r'^(.+?)\s+(?:was\s+)?(\w+ed)\s+(?:from\s+(.+?)\s+)?'
                       r'(?:at|to|on|in|into|onto|under|next to|beside)\s+(.+)$', re.IGNORECASE)
_MOVED = frozenset({'moved', 'relocated', 'transferred'})
_SET = re.compile(r'^(.+?)\s+(?:was\s+)?set\s+to\s+(.+?)\s*$', re.IGNORECASE)
_SETTING_VALUE = re.compile(r'^[-+]?\d+(?:[.,]\d+)?\s?(?:%|°\s?[CF]?|[A-Za-z]{1,8})?$')  # "19 degrees"
# A thing's state reported as a change: "lock.front_door changed from unlocked to locked".
# (Also "sensor.dishwasher_status changed idle -> running".)
_CHANGED = re.compile(r'''(?i)^(.+?)\s+(?:stat\w*\s+)?changed:?\s+(?:(?:from\s+)?(\S+)\s+)?'''
                      r'''(?:to|->|=>|→)\s+['"]?([-+\w.]+)''')
# Words after a thing that say its state is reported: "front_door state changed: closed -> open".
_REPORTED = frozenset({'changed', 'change', 'changes', 'updated', 'update', 'is', 'now'})


def _denied(value: str) -> bool:
    """A field that denies or doubts what it names ("no cup", "rejected: cat (0.18)", "towel
    (rejected)"); an aside's doubt is about something else ("office light ON (should be OFF
    after 20:00)")."""
    return bool(_DENIED.search(ASIDE.sub(' ', value))) or any(
        _VERDICT.match(a.strip('() ')) for a in ASIDE.findall(value))


def _holder_named(value: str) -> str:
    """The person a place field names as the thing's holder ("held_by:grace"), or ''."""
    key, colon, who = value.partition(':')
    return who.strip().lower() if colon and role_key(key) in HOLDER_KEYS and who.strip().isalpha() else ''


@lru_cache(maxsize=16)
def _keyed(text: str) -> tuple[Field, ...]:
    """The fields of ``text`` under their role keys: split once for both of a line's readings
    (whether it is undone, what it changed), which ingest asks one after the other."""
    return flagged(named_values(tuple(keyed_field(k, v) if k is not None else (None, v)
                                      for k, v in split_fields(text))))


def _own_state_first(found: list[StateChange], subject: str) -> list[StateChange]:
    """``found`` without its thing's door or lid when the record gives the thing's own state,
    which says more ("appliance=dishwasher status=finished door=closed": finished)."""
    if not any(c.object == subject and c.attribute == 'state' for c in found):
        return found
    return [c for c in found if c.object not in {f'{subject} {part}' for part in OPENING_PARTS}]


class RecordReader(RecordValues):
    """Reads the state changes of log records (see the module); names as
    :class:`~brainmem_ros.encoders.record_names.RecordNames` does."""

    def changes(self, text: str) -> list[StateChange]:
        """The state changes the record fields of ``text`` state (none for prose)."""
        if not _RECORD.search(text):
            return []
        keyed = _keyed(text)
        if undone(keyed):
            return []
        # A field that denies or doubts ("no cup", "rejected: cat (0.18)", "expected CLOSED")
        # states nothing.
        fields = [(k, v) for k, v in keyed if not _denied(v)]
        subject, found = self._subject(fields)
        relation = next((v.replace('_', ' ').lower() for k, v in fields if k in {'rel', 'relation'}), '')
        before = ''
        held: list[StateChange] = []
        for i, (key, value) in enumerate(fields):
            holder = self._holder(fields, i) or subject
            if key is None:
                # A lone state word in a field of its own is the subject's ("freezer_door;open").
                lone = self._state(holder, value) if holder and len(value.split()) == 1 else []
                found += lone or (self._pair(value) if not (holder and self._place_field(value)) else [
                    StateChange(holder, 'location', '', self.place(value))])
            elif key == 'target' and holder and _SETTING_VALUE.match(value.strip()):
                found.append(StateChange(holder, 'setting', '', value.strip()))  # "target=200C"
            elif key in PLACE_KEYS and (who := _holder_named(value)):
                held += [StateChange(holder, 'location', '', who)] if holder else []  # "loc=held_by:grace"
            elif key in PLACE_KEYS:
                if holder and (key != 'target' or relation in _PLACE_RELATIONS) \
                        and value.strip().lower() not in REFERENCE_FRAMES:
                    found += [StateChange(holder, 'location', '', p) for p in [self.place(value, keyed=True)]
                              if p and p != holder]
            elif key in STATE_KEYS:
                # "status: batt 54%": a field of its own under a heading. A "state" is a thing's
                # ("<state>finished</state>"); a "status" may be its task's ("status=done").
                # An appliance's status is its cycle ("appliance=dishwasher status=finished"), but
                # not in a task's line ("node=HandOver status=SUCCESS object=tv_remote").
                process = key == 'state' or (bool(holder) and self._kind(holder) == 'appliance'
                                             and not any(k in CALL_KEYS for k, _ in fields))
                found += (self._state(holder, value, keyed=True, process=process) if holder else []
                          ) or self._pair(value)
            elif key in GRIPPED_KEYS and holder and value.lower() in _YES:  # "in_gripper=true"
                found.append(StateChange(holder, 'location', '', HELD))
            elif key in HOLDER_KEYS:
                # A name or an id of words ("recipient=nurse_okafor": the nurse Okafor).
                who = person(value) or (value.strip().lower().replace('_', ' ') if _WORDS_ID.match(value)
                                        else '')
                # Who has the thing says more than the room it is in: read last, it stands.
                held += [StateChange(holder, 'location', '', who)] if holder and who else []
            elif key == 'from':
                before = value
            elif key == 'to' and (measure := next((v for k, v in fields if k == 'attribute'), '')):
                found += self._reading(measure.strip().lower(), value, subject)  # "attribute=temperature"
            elif key == 'to':
                found += (self._state(subject, value) or [
                    StateChange(subject, 'location', self.place(before), p) for p in [self.place(value)] if p]
                ) if subject else []
            else:
                # A door under a labelled place with no thing is the place's ("compartment=C2 door=OPEN").
                labelled = next((v for k, v in fields if k == 'location' and v.split()[0] in PLACE_NOUN_KEYS),
                                '') if key in OPENING_PARTS else ''
                found += flag_change(key, value, holder) or self._reading(
                    key, value, holder or (self.place(labelled) if labelled else ''))
        found = _own_state_first(found + held, subject)
        # What a task that succeeded did to its thing outweighs its fields' own reading.
        done = task_changes(self, fields, subject=subject)
        told = {(d.object, d.attribute) for d in done}
        return [c for c in found if (c.object, c.attribute) not in told] + done

    def undone(self, text: str) -> bool:
        """Whether ``text`` is a record that says what it reports did not happen (a task that
        failed or waits, a detection rejected): nothing in the line is a change then."""
        return bool(_RECORD.search(text)) and undone(_keyed(text))

    def sentences(self, text: str) -> list[str]:
        """Prose inside a record, which the parse of the whole line splits wrongly: a quoted
        sentence (``vlm: "The trash can is now full."``) or the words after a software tag
        (``VLM: someone left a cane by the desk``)."""
        if not _RECORD.search(text):
            return []
        found = [q for q in _QUOTED_PROSE.findall(text) if len(q.split()) >= 3]
        tagged = _TAGGED_PROSE.match(text)
        # A software tag is in capitals or holds more than letters; a speaker's name ("Anna:
        # I left the keys ...") opens a sentence the parse of the whole line reads well.
        software = tagged is not None and (tagged.group(1).isupper() or not tagged.group(1).isalpha())
        if tagged and software and len(tagged.group(2).split()) >= 4 and not _RECORD.search(tagged.group(2)):
            found.append(tagged.group(2))
        return found

    # -- fields -------------------------------------------------------------------

    def _subject(self, fields: list[Field]) -> tuple[str, list[StateChange]]:
        """The thing the record is about, and where it is when a detection says so."""
        colour = next((v.strip().lower() for k, v in fields
                       if k in COLOUR_KEYS and v.strip().isalpha()), '')
        owner = next((v.strip().lower() for k, v in fields if k in OWNER_KEYS and v.strip().isalpha()), '')
        for key, value in fields:
            if key in DETECTION_KEYS and (who := person(value)):
                return who, []  # "person=Sam location=kitchen"
            if key in THING_KEYS | DETECTION_KEYS and (named := self.thing(value, keyed=True)):
                # "label=mug color=blue": the blue mug, not the white one; "owner_tag": "anna": hers.
                named = f'{colour} {named}' if colour and colour not in named.split() else named
                return (f"{owner}'s {named}" if owner else named), []
        if any(k in STATE_KEYS for k, _ in fields):  # "state_clf | target=kettle | pred=boiling"
            for key, value in fields:
                if key == 'target' and (named := self.thing(value, keyed=True)):
                    return named, []
        for key, value in fields:
            if key is None:
                thing, rest = self._detected(value)
                if thing:
                    place = self.place(rest) if self._place_field(rest) else ''
                    return thing, [StateChange(thing, 'location', '', place)] if place else []
        if topic := self.topic_of(fields):  # "MQTT publish: topic 'zigbee2mqtt/desk_lamp', payload '{"
            return topic, []
        # "vision;ice tray: empty; location: kitchen sink": a thing given with its state names it
        # before the source's bare word does.
        stated = next((t for k, v in fields if k is None and (pair := COLON.match(v))
                       and self._state(t := self.thing(pair.group(1)), pair.group(2)) and t), '')
        # "detect: toolbox conf=0.91 loc=garage_floor": the thing after the software's tag (and
        # after a time stamp: "2024-06-11T09:28:20Z vacuum.robovac state=charging location=dock").
        return stated or next((t for k, v in fields if k is None and (
            t := self.thing(v.rsplit(': ', 1)[-1]) or self.thing(_STAMPS.sub('', v)))), ''), []

    def _holder(self, fields: list[Field], i: int) -> str:
        """The thing a role field right after a bare thing belongs to ("fire door 3 status=OPEN")."""
        if i == 0 or fields[i][0] not in STATE_KEYS | PLACE_KEYS | set(MEASURES):
            return ''
        key, value = fields[i - 1]
        if key is not None and key not in THING_KEYS:
            return ''
        value = value.rsplit(': ', 1)[-1]
        # After a time stamp or an id: "2024-06-01T07:10:03Z cover.garage_door state=closed".
        return self.thing(value) or self.thing(_STAMPS.sub('', value))

    def _detected(self, value: str) -> tuple[str, str]:
        """A thing given with its confidence ("det: cup 0.88", "TV 0.95 in living room"), and what
        follows the thing ("det: towel on sofa 0.9": on sofa)."""
        words = [w for w in value.rsplit(': ', 1)[-1].replace("'", ' ').replace('"', ' ').split() if w != '@']
        at = next((i for i, w in enumerate(words) if i and CONFIDENCE.match(w)), None)
        if at is None:
            return '', ''
        cut = next((i for i in range(1, at) if words[i].lower() in RECORD_PLACE_PREPS), at)
        return self.thing(' '.join(words[:cut])), ' '.join(words[cut:at] + words[at + 1:])

    def _place_field(self, value: str) -> bool:
        words = value.split()
        return bool(words) and words[0].lower() in RECORD_PLACE_PREPS and bool(self.place(value))

    def _pair(self, value: str, depth: int = 0) -> list[StateChange]:
        """A field with no key: "TV: OFF", "ward door -> OPEN", "window OPEN", "mug held",
        "umbrella moved: entrance -> coat rack", "room 204 temp 17 C", "batt 54%"."""
        if depth > _MAX_NESTING:
            return []  # "a: b: c: ..." thousands deep: no record nests so, and recursion would end the call
        value = ASIDE.sub(' ', value).strip()
        colon = COLON.match(value)
        if colon:
            # The value's own pair first ("door_opener: ward door -> OPEN"), then the key's
            # thing in the value's state ("TV: OFF").
            left, right = colon.group(1), colon.group(2)
            words = left.split()
            moved = [i for i in (0, len(words) - 1) if words[i].lower() in _MOVED]
            if len(words) >= 2 and moved and ARROW.search(right):
                # "thermos moved: hall bench -> windowsill", "moved thermos: ...": from one to the other.
                named = words[1:] if moved[0] == 0 else words[:-1]
                thing, place = self.tail_thing(' '.join(named)), self.place(ARROW.split(right)[-1])
                return [StateChange(thing, 'location', '', place)] if thing and place else []
            got = flag_change(left, right) or self._pair(right, depth + 1)  # "Door_Closed: FALSE"
            while len(words) >= 2 and words[-1].lower() in _REPORTED:
                words.pop()  # "front_door state changed: closed -> open"
            stated = len(words) >= 2 and role_key(words[-1]) in STATE_KEYS
            if stated:
                words.pop()  # "toilet 3 status: clogged"
            left = ' '.join(words)
            thing = self.tail_thing(left)
            if not got and thing:
                # An appliance reports its cycle ("washing_machine status: running"); under a
                # state key any word is the state ("bilge_pump_1 state changed: off -> running").
                device = entity_id(left) or stated
                cycle = self._kind(thing) == 'appliance'
                got = self._state(thing, right, keyed=device, process=cycle)
                if not got and (done := done_by(right, self.states)) != right:
                    got = self._state(thing, done.split()[-1])  # "lock.front_door: unlocked by Alice"
            return got or self._measured(left, right)
        parts = ARROW.split(value)
        if len(parts) >= 2 and not _CHANGED.match(value):  # ("X changed idle -> running": below)
            return self._transition(parts[-2], parts[-1]) or self._pair(parts[-1], depth + 1)
        return self._telegraphic(value)

    def _topic(self, path: str, value: str) -> list[StateChange]:
        """A message topic and its payload: "home/garage/door/state OPEN"."""
        thing = self.topic_thing(path)
        return self._state(thing, value) if thing else []

    def _transition(self, left: str, right: str) -> list[StateChange]:
        """"ward door -> OPEN", "kitchen drawer 3 closed->open": the thing before the arrow
        (without its old state) in the state after it."""
        words = left.split()
        at = next((i for i, w in enumerate(words) if i and w.lower() in _MOVED), 0)
        place = self.place(right, keyed=True) if at else ''
        if place and (thing := self.tail_thing(' '.join(words[:at]))):
            return [StateChange(thing, 'location', '', place)]  # "tote_114 moved station_3 -> lane_7"
        measure = words[-2].lower() if len(words) >= 3 else ''
        if measure in MEASURES and (held := self.tail_thing(' '.join(words[:-2]))):
            return self._reading(measure, right, held)  # "climate.office setpoint 24 -> 26"
        thing = self.tail_thing(left)
        if not thing and len(words) >= 2:
            thing = self.tail_thing(' '.join(words[:-1]))  # "cabinet 2 latched->unlocked"
        if not thing:
            return []
        # "[tracker] glasses -> nightstand": a household thing (not a place, not a mode) and a
        # place after the arrow.
        kind = self._kind(thing)
        if STEP_VERBS & set(thing.split()):
            kind = None  # "place sponge -> sink": a step of an action log (log_commands.py)
        place = self.place(right, keyed=True) if kind not in {None, 'place'} else ''
        if place and place.split()[-1] not in NOUN_TYPES and place.split()[-1] not in self.nouns:
            place = ''
        return self._state(thing, right) or ([StateChange(thing, 'location', '', place)] if place else [])

    def _telegraphic(self, value: str) -> list[StateChange]:
        words = value.split()
        if len(words) == 2 and '/' in words[0].strip('/'):
            return self._topic(words[0], words[1])
        if len(words) >= 2 and words[0].lower() in BATTERY_KEYS:
            return self._reading(words[0].lower(), ' '.join(words[1:]), '')
        measure = next((i for i, w in enumerate(words) if w.lower() in MEASURES), None)
        if measure:
            return self._reading(words[measure].lower(), ' '.join(words[measure + 1:]),
                                 self.thing(' '.join(words[:measure])))
        changed = _CHANGED.match(value)
        if changed and (measured := self._measured(changed.group(1), changed.group(3))):
            return measured  # "sensor.living_room_temperature changed to 21.5"
        setting = _SET.match(value)  # "climate.bedroom set to 19 degrees"
        if setting and _SETTING_VALUE.match(setting.group(2)) \
                and (thing := self.tail_thing(setting.group(1))):
            return [StateChange(thing, 'setting', '', setting.group(2))]
        if changed and (thing := self.tail_thing(changed.group(1))):
            # (Any word a device changed to is its state: "Dishwasher changed to Running".)
            return self._state(thing, changed.group(3), keyed=entity_id(changed.group(1))
                               or self._kind(thing) in DEVICE_KINDS)
        switched = _SWITCHED.match(value)
        if switched and (thing := self.tail_thing(switched.group(1))):
            return [StateChange(thing, 'power', '', switched.group(2).lower())]
        arriving = _ARRIVING.match(value)
        if arriving and arriving.group(2).lower() not in self.states:
            thing, place = self.tail_thing(arriving.group(1)), self.place(arriving.group(4))
            if arriving[2].lower() == 'attached' and self.self_vocab & {*normalise_name(arriving[4]).split()}:
                place = HELD  # "Object 'blue_cup' attached to gripper", "... to link 'gripper_link'"
            if thing and place:
                return [StateChange(thing, 'location', self.place(arriving.group(3) or ''), place)]
        if len(words) >= 3:
            words = done_by(value, self.states).split()  # "lock.front_door unlocked by Alice"
        if len(words) >= 2:
            before = words[:-1]
            while len(before) > 1 and before[-1].lower() in _LINKING:
                before.pop()  # "stove left ON", "TV still on", "lights switched OFF"
            thing = self.tail_thing(' '.join(before))
            # "Hang on", "Hold on": one word before "on" or "off" is a household thing, or a verb.
            if thing and not (' ' not in thing and words[-1].lower() in POWER and self._kind(thing) is None):
                return self._state(thing, words[-1])
        return []
