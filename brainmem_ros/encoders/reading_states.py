"""The state changes a parse reports: results of acts, states, switches; with the places of
:mod:`~brainmem_ros.encoders.reading_places` and the readings of
:mod:`~brainmem_ros.encoders.reading_measures` below it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import (
    NOUN_TYPES,
    VERB_RESULT_STATES,
    participle_states,
    switch_verbs,
)
from brainmem_ros.encoders.reading_base import (
    DEVICE_KINDS,
    HELD,
    NEARLY,
    PARTIAL,
    POWER,
    dated,
    has_object,
    indefinite,
    is_person,
    narrated,
)
from brainmem_ros.encoders.reading_measures import IN_PROGRESS, STARTING
from brainmem_ros.encoders.reading_places import PlaceReading
from brainmem_ros.memory.types import StateChange, normalise_name, unowned

if TYPE_CHECKING:
    from spacy.tokens import Token

# Verbs of switching a thing on or off ("a lamp switched on").
_SWITCHING = frozenset({'switch', 'turn', 'power', 'flip', 'click', 'shut', 'cut'})
_CHANGING = frozenset({'change', 'switch'})  # "changed to idle"
_OWNERS = frozenset({'nsubj', 'nsubjpass', 'dobj', 'attr', 'ROOT'})  # what "its" may refer to
# Verbs of moving a thing into a state ("drawn closed", "slid shut", "swung open").
_MOTIONS = frozenset({'draw', 'slide', 'swing', 'push', 'pull', 'blow', 'kick', 'slam', 'bang', 'roll',
                      'fling'})
# Words of degree between a thing and its state ("curtains wide open"); those of part degree
# stay with the state ("half closed").
_DEGREES = PARTIAL | {'wide', 'fully'}
# Verbs a thing rests by, whose participle a state can follow ("lying open", "standing ajar").
_POSTURES = frozenset({'lie', 'rest', 'sit', 'stand', 'hang', 'lean'})


# Verbs of a thing coming apart by itself, and the state it is left in.
_BREAKING = {'break': 'broken', 'crack': 'cracked', 'shatter': 'broken', 'snap': 'broken', 'smash': 'broken',
             'tear': 'torn', 'rip': 'torn'}
# What is open when raised and closed when lowered ("lowered the blinds", "raised the lid"),
# unlike a volume, a bed or a flag.
_RAISING = {'raise': 'open', 'lower': 'closed'}
_COVERINGS = frozenset({'blind', 'blinds', 'shade', 'shades', 'shutter', 'shutters', 'curtain', 'curtains',
                        'lid', 'hatch', 'awning', 'barrier', 'gate'})
# Nouns of a stretch of time: "on all night" is on (the parser reads "on" as its preposition).
# Not lexicon.TIME_NOUNS, which holds dates too: "on Monday" says when, not that it is on.
_TIMES = frozenset({'night', 'day', 'morning', 'afternoon', 'evening', 'week', 'weekend', 'while'})


class StateReading(PlaceReading):
    """The state changes a parse reports (a layer of a parse reading)."""

    def state_changes(self) -> tuple[StateChange, ...]:
        """The state changes the parse reports."""
        names, own = self._names_by_token()
        found: list[StateChange] = []
        for tok in self.doc:
            if self._asked(tok):
                continue  # "Is the back door locked?" states nothing
            word = tok.lower_
            # (A state the parser calls a noun after "left": "the fridge door was left ajar".)
            stated = tok.pos_ in {'ADJ', 'VERB', 'ADP', 'ADV'} or tok.dep_ == 'oprd'
            if word in self.states and stated and not (
                    tok.dep_ == 'amod' and tok.head.i > tok.i) and tok.dep_ != 'intj' \
                    and not any(c.dep_ in {'pobj', 'pcomp'} and (c.lemma_.lower() not in _TIMES or dated(c))
                                for c in tok.children) \
                    and not self._moved_into_state(tok) \
                    and not has_object(tok) and not (tok.dep_ == 'prt' and word in POWER
                                                     and tok.head.lemma_.lower() != 'be') \
                    and not any(c.dep_ == 'prt' and c.lower_ in POWER for c in tok.children) \
                    and not self._denied(tok) and not self._unreal(tok) \
                    and not (word in POWER and tok.head.lemma_.lower() == 'put') \
                    and not (tok.head.i != tok.i and tok.head.pos_ in {'VERB', 'AUX'}
                             and self._unreal(tok.head)):
                # ("The garage door is not locked", "If the stove is hot", "Please turn the oven
                # on at six": no state.)
                value = self._partial(tok) + self._as_state(tok)
                found += [StateChange(subject, 'power' if word in POWER else 'state', '', value)
                          for subject in self._subjects_of_state(tok, names)]
            if (tok.pos_ in {'VERB', 'AUX'} or has_object(tok)) and not self._negated(tok) \
                    and not self._unreal(tok) and not self._negative_argument(tok):  # "Nobody closed it"
                found.extend(self._result_state(tok, names) or self._broke(tok, names))
                placed = self._holding(tok, names) or self._given(tok, names) \
                    or self._placement(tok, names) or self._went(tok, names) or self._closed_on(tok, names)
                found.extend(placed)
                if any(c.attribute == 'location' for c in placed):
                    found.extend(self.gapped(tok, names))
        found.extend(self._scene(names))
        found.extend(self._switched(names))
        found.extend(self._changed_to(names))
        found.extend(self._working(names))
        found.extend(self._level_settings(names))
        found.extend(self._modes(names))
        found.extend(self._on_states(names))
        found.extend(self._readings(own))
        return _in_sequence(found)

    def _as_state(self, tok: Token) -> str:
        """State word ``tok`` as the state its verb leaves ("the front door opened": open, as
        "opened the front door" says; "the tank was filled": full)."""
        word = tok.lower_
        return participle_states().get(word, word) if tok.tag_ in {'VBN', 'VBD'} else word

    def _moved_into_state(self, tok: Token) -> bool:
        """A verb of motion right before the state it brought about ("curtains drawn closed")
        is the motion, not a state of its own; "stuck open" is two states."""
        after = self.doc[tok.i + 1] if tok.i + 1 < len(self.doc) else None
        return tok.pos_ == 'VERB' and tok.lemma_.lower() in _MOTIONS and after is not None \
            and after.lower_ in self.states and after.lower_ not in POWER

    def _partial(self, tok: Token) -> str:
        """The word of part degree before a state, with a space ("half " of "half closed",
        "half-open"): a window half open is not open. Degrees of whole ("wide open") add nothing."""
        before = tok.i - 1
        if before > 0 and self.doc[before].text == '-':
            before -= 1
        word = self.doc[before].lower_ if before >= 0 else ''
        return f'{word} ' if word in PARTIAL or (word in NEARLY and tok.pos_ == 'ADJ') else ''

    def _names_by_token(self) -> tuple[dict[int, str], dict[int, str]]:
        """The entity name each token of a mention belongs to ("car" and "keys" of "the car
        keys", whichever the parser made the object), and the same with the robot's own
        parts, which have readings ("battery at 40 percent") but no place in the world."""
        names: dict[int, str] = {}
        own: dict[int, str] = {}
        self.heads = {}
        # "Lucía: it's in my backpack": who speaks is no thing the utterance places.
        speaker = self.speaker_colon()
        self.speaker = normalise_name(' '.join(t.text for t in self.doc[:speaker]))
        for start, end, head in self.entity_spans():
            if end <= speaker:
                continue
            name = normalise_name(' '.join(self._word(self.doc[i], i == head)
                                           for i in range(start, end)))
            if not name:
                continue
            world = not self._is_other_self(name, start, head)
            for i in range(start, end):
                own[i] = name
                self.heads[i] = head
                if world:
                    names[i] = name
        self._name_parts(names)
        self._name_ones(names)
        return names, own

    def _name_ones(self, names: dict[int, str]) -> None:
        """A thing named by the kind named before it: "the red mug is on the desk and the blue one
        is in the sink" (the blue mug), "my keys are in my coat; Sam's are on the hook" (Sam's keys)."""
        for word in self.doc:
            described = [c for c in word.children if c.dep_ in {'amod', 'compound'} and c.i < word.i]
            one = word.lower_ == 'one' and bool(described) and any(
                c.dep_ == 'det' and c.lower_ in {'the', 'this', 'that'} for c in word.children)
            owner = word.pos_ == 'PROPN' and word.dep_ in {'nsubj', 'nsubjpass', 'dobj'} and any(
                c.dep_ == 'case' and c.lower_ in {"'s", '\u2019s'} for c in word.children)
            if not (one or owner):
                continue
            # (A thing talked about, not the place it is in: "the red mug is on the desk".)
            kind = next((p for p in reversed(self.doc[:word.i]) if p.i in names and self.heads.get(p.i) == p.i
                         and p.pos_ == 'NOUN' and p.dep_ in {'nsubj', 'nsubjpass', 'dobj', 'attr'}), None)
            if kind is None:
                continue
            thing = unowned(names[kind.i])
            names[word.i] = normalise_name(f"{word.lower_}'s {thing}" if owner else ' '.join(
                [*(c.lower_ for c in described), thing.split()[-1]]))
            self.heads[word.i] = word.i

    def _name_parts(self, names: dict[int, str]) -> None:
        """"its door" after "the washer": the washer door (a part is named by its thing; also in
        a caption's fragment, "a refrigerator with its door open")."""
        for its in (t for t in self.doc if t.lower_ == 'its' and t.dep_ == 'poss' and t.head.i in names):
            thing = next((p for p in reversed(self.doc[:its.i]) if p.i in names and self.heads.get(p.i) == p.i
                          and p.dep_ in _OWNERS and (
                              p.pos_ == 'NOUN' or NOUN_TYPES.get(p.lemma_.lower()) not in (None, 'person'))),
                         None)
            if thing is not None and names[thing.i] != names[its.head.i]:
                part = names[its.head.i]
                for i in [i for i, n in names.items() if n == part and self.heads.get(i) == its.head.i]:
                    names[i] = f'{names[thing.i]} {part}'

    def _switched(self, names: dict[int, str]) -> list[StateChange]:
        """A thing switched on or off by a verb with no object: "a floor lamp switched on".

        Also "the TV turned off" and "a switched-off television". An act with its object ("she
        turned on the TV") is the state layer's; a person is switched nothing ("Sam switched off").
        """
        found: list[StateChange] = []
        for tok in self.doc:
            verb = tok.head
            # (and "the heating came on at six")
            switching = verb.lemma_ in _SWITCHING or (verb.lemma_ == 'come' and tok.lower_ == 'on')
            if tok.lower_ not in POWER or tok.dep_ != 'prt' or not switching \
                    or verb.tag_ not in {'VBN', 'VBD'} or has_object(verb) or self._negated(verb) \
                    or self._asked(verb) or any(self._unreal(a) for a in (verb, *verb.ancestors)):
                continue
            before = verb.i - 1
            thing = self.doc[before] if before >= 0 else verb
            if before in names and self.heads.get(before) == before and tok.i == verb.i + 1 \
                    and not is_person(thing):  # ("Kitchen Light turned on", not "Sam switched off")
                found.append(StateChange(names[before], 'power', '', tok.lower_))  # "lamp switched on"
            elif verb.dep_ == 'amod' and verb.head.i in names and verb.head.i > tok.i:
                found.append(StateChange(names[verb.head.i], 'power', '', tok.lower_))  # "switched-off TV"
        return found

    def _changed_to(self, names: dict[int, str]) -> list[StateChange]:
        """A state a thing changed or was switched to: "Garage Door changed to Closed" (a home
        system's log), "I switched the TV to standby". Beside a state word, any bare word is
        the state of an appliance or a piece of furniture ("Washing Machine changed to Idle")."""
        found: list[StateChange] = []
        for tok in self.doc:
            word = tok.lower_
            # "to" a preposition, or taken for an infinitive's ("switched the TV to standby").
            infinitive = tok.dep_ in {'advcl', 'xcomp'} and [c.lower_ for c in tok.children] == ['to']
            verb = tok.head if infinitive else tok.head.head
            if not (infinitive or (tok.dep_ == 'pobj' and tok.head.lower_ in {'to', 'into'})) \
                    or not tok.is_alpha \
                    or verb.lemma_.lower() not in _CHANGING or verb.tag_ not in {'VBN', 'VBD'} \
                    or self._negated(verb) or self._asked(verb) \
                    or any(self._unreal(a) for a in (verb, *verb.ancestors)):
                continue
            roles = {'dobj'} if has_object(verb) else {'nsubj', 'nsubjpass'}
            things = self._things([c for c in verb.children if c.dep_ in roles], names)[:1]
            # (An infinitive's verb is a purpose: "switched the radio on to listen".)
            bare = not ((word in self.verbs) if infinitive else any(tok.children)) and all(
                (NOUN_TYPES.get(names[t.i]) or NOUN_TYPES.get(t.lemma_.lower())) in DEVICE_KINDS
                for t in things)
            if word not in self.states and not bare:
                continue
            found += [StateChange(names[t.i], 'power' if word in POWER else 'state', '', word)
                      for t in things if not is_person(t)]
        return found

    def _subjects_of_state(self, tok: Token, names: dict[int, str]) -> list[str]:
        """The things state word ``tok`` is said of: one, or those listed as its subject ("Both
        the kettle and the toaster are unplugged")."""
        before = tok.i - 1
        while before > 0 and self.doc[before].lower_ in _DEGREES:
            before -= 1  # "curtains wide open", "the window half closed"
        if before >= 0 and self.heads.get(before) == before and before in names:
            # Right after the thing, however the parser hung it: "Door check: garage door
            # OPEN", "left the door open".
            return [names[before]]
        if before >= 0 and (self.doc[before].tag_ in {'VBN', 'VBD'} or (
                self.doc[before].tag_ == 'VBG' and self.doc[before].lemma_ in _POSTURES)):
            # Right after a verb of its own subject: "grey curtains drawn closed", "the gate swung
            # shut", "a red backpack lying open".
            verb = self.doc[before]
            things = self._things([c for c in verb.children if c.dep_ in {'nsubj', 'nsubjpass'}], names)
            if things:
                return [names[things[0].i]]
            if verb.dep_ == 'acl' and verb.head.i in names and verb.head.i < verb.i:
                return [names[verb.head.i]]  # "a hallway with the front door left open"
        if tok.head.i in names and tok.head.i < tok.i and self.heads.get(tok.head.i) == tok.head.i:
            return [names[tok.head.i]]  # "door ajar" hung on the door
        # The subject of the word, of its auxiliary ("the printer is jammed" hung on "is"), or of
        # the verb it completes; a clause of its own ("Sam told me the printer is jammed") has
        # its own subject.
        anchors = [tok, *(c for c in tok.children if c.dep_ in {'aux', 'auxpass'})]
        if tok.dep_ not in {'ccomp', 'relcl', 'csubj'}:
            anchors.append(tok.head)
        for anchor in anchors:
            for child in anchor.children:
                if child.dep_ in {'nsubj', 'nsubjpass', 'csubj'}:
                    things = self._things([child], names)
                    if things:
                        return list(dict.fromkeys(names[t.i] for t in things))
        if tok.i > 0 and tok.i - 1 in names:
            return [names[tok.i - 1]]
        return []

    def _broke(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"The vase fell off the shelf and broke", "the mirror cracked": a thing that broke by
        itself (no object) is broken; a joined verb shares the first one's subject."""
        state = _BREAKING.get(self._verb_lemma(tok))
        if state is None or tok.tag_ != 'VBD' or has_object(tok):
            return []
        subjects = [c for c in tok.children if c.dep_ == 'nsubj']
        if not subjects and tok.dep_ == 'conj':
            subjects = [c for c in tok.head.children if c.dep_ == 'nsubj']
        return [StateChange(names[t.i], 'state', '', state) for t in self._things(subjects, names)
                if not is_person(t)]

    def _result_state(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"Closed the garage door" -> door.state closed; "emptied the bin" -> empty;
        "turned off the lamp" -> lamp.power off. The state is the verb's participle when
        that is a state word, or the adjective the verb is made from ("opened" -> open);
        only a done act (past tense or participle) on a definite thing counts."""
        # "switched off the lights" is parsed with the object under the particle, or with the
        # particle as a preposition right after the verb.
        particles = [c for c in tok.children if c.dep_ == 'prt' or (
            c.dep_ == 'prep' and c.lower_ in POWER and not _resting_on(c)
            and (c.i == tok.i + 1 or not any(g.dep_ == 'pobj' for g in c.children) or _before_comma(c)))
            or (c.dep_ == 'advmod' and c.lower_ in POWER)]  # "switched the light back on"
        # "switched the porch light off", with the particle parsed under the object.
        particles += [g for c in tok.children if c.dep_ in {'dobj', 'obj'} for g in c.children
                      if g.dep_ == 'prt' and g.lower_ in POWER]
        candidates = [g for c in particles for g in c.children if g.dep_ == 'pobj']
        said = [c for c in [*tok.children, *candidates] if c.dep_ in {'dobj', 'obj', 'pobj'}]
        objects = [o for o in self._things(said, names) if not indefinite(o)]
        if not objects and tok.tag_ == 'VBN' and tok.dep_ == 'acl' and tok.head.i in names:
            objects = [tok.head]  # "kitchen light left on"
        if not objects and not any(c.dep_ in {'nsubj', 'dobj'} for c in tok.children):
            # "is plugged in but switched off": a passive's subject, shared by its joined verbs.
            passive = tok.head if tok.dep_ == 'conj' else tok
            objects = self._things([c for c in passive.children if c.dep_ == 'nsubjpass'], names)
        if not objects or (tok.tag_ not in {'VBD', 'VBN'} and tok.pos_ == 'VERB' and not self._doing(tok)
                           and not narrated(tok)):
            return []
        lemma, word = self._verb_lemma(tok), tok.lower_
        particle = next((c.lower_ for c in particles), '')
        appliances = all('appliance' in (NOUN_TYPES.get(o.lemma_.lower()), NOUN_TYPES.get(names[o.i]))
                         for o in objects)
        if particle in POWER:
            # "put the kettle on": an appliance put on is switched on (a coat put on is worn).
            if lemma not in switch_verbs() and not (lemma == 'put' and appliances):
                return []
            attribute, value = 'power', particle
        elif lemma in STARTING and appliances and tok.tag_ in {'VBD', 'VBN'}:
            attribute, value = 'state', 'running'  # "started the dishwasher"
        elif lemma in self.states and (word.endswith('ed') or word not in self.states):
            attribute, value = 'state', lemma
        elif lemma in _RAISING and tok.tag_ in {'VBD', 'VBN'} and all(
                o.lemma_.lower() in _COVERINGS or o.lower_ in _COVERINGS for o in objects):
            attribute, value = 'state', _RAISING[lemma]  # "lowered the blinds": closed
        elif lemma in _BREAKING and lemma != 'crack' and tok.tag_ in {'VBD', 'VBN'}:
            # "Tom broke the vase" (not "cracked the window open": opened a little).
            attribute, value = 'state', _BREAKING[lemma]
        elif tok.tag_ == 'VBG' and lemma in IN_PROGRESS:
            attribute, value = 'state', IN_PROGRESS[lemma]  # "I'm charging the phone": not charged yet
        elif (tok.tag_ == 'VBG' or narrated(tok)) and (done := next((f for f in (lemma + 'd', lemma + 'ed')
                                                  if f in self.states), '')):
            attribute, value = 'state', done  # "closing the door", "C closes the drawer": closed
        elif word in self.states and word not in POWER:
            attribute, value = 'state', self._as_state(tok)
        elif (tok.tag_ in {'VBD', 'VBN'} or narrated(tok)) and (value := VERB_RESULT_STATES.get(lemma, '')) \
                in self.states:
            attribute = 'state'  # "wiped the table", "refilled the kettle": clean, full
        else:
            return []
        return [StateChange(names[o.i], attribute, '', value) for o in objects]



def _resting_on(prep: Token) -> bool:
    """"on a desk": a place where a thing rests, not a device switched on ("the lid shut on a
    desk" is no lid switched on; "switched on the lamp" is)."""
    return any(g.dep_ == 'pobj' and NOUN_TYPES.get(g.lemma_.lower()) in {'furniture', 'place'}
               for g in prep.children)


def _in_sequence(changes: list[StateChange]) -> tuple[StateChange, ...]:
    """One change per thing and attribute, in the order the text tells them: "took the book
    out of the box and put it on the shelf" moved the book from the box to the shelf (not
    to "held", then to the shelf, at the same instant)."""
    merged: dict[tuple[str, str], StateChange] = {}
    for change in changes:
        key = (change.object, change.attribute)
        first = merged.get(key)
        if first is not None and first.after == change.after:
            continue  # told twice ("the door is locked; I checked, it is locked")
        # Found on, switched off: from on. Taken from the box, put on the shelf: from the box.
        before = first.before or (first.after if first.after != HELD else '') if first else ''
        merged[key] = change if first is None else StateChange(
            change.object, change.attribute, before or change.before, change.after)
    return tuple(merged.values())


def _before_comma(tok: Token) -> bool:
    """A preposition's object never comes after a comma: "put the washer on, cotton cycle"."""
    return tok.i + 1 < len(tok.doc) and tok.nbor(1).text in {',', ';', '-'}
