"""Readings of measures a parse reports, and the test of a clause that states no change.

"the thermostat is set to 22 degrees" (setting), "fridge temperature 4 C" (temperature),
"battery at 40 percent" (level), and the power a device's work shows ("a television showing
the news" is on). :meth:`MeasureReading._unreal` (an intention, a possibility,
an attempt or a condition) is shared with the state layer above
(:mod:`~brainmem_ros.encoders.reading_states`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import NOUN_TYPES, WORKING, units
from brainmem_ros.encoders.reading_base import NOMINAL, conditional, is_person
from brainmem_ros.encoders.reading_scenes import SceneReading
from brainmem_ros.memory.types import StateChange

if TYPE_CHECKING:
    from spacy.tokens import Token

# A number with its sign, which the small tagger does not read as a number.
_SIGNED = re.compile(r'^[-\u2212+]\d+(?:[.,]\d+)?$')
_TRYING = frozenset({'try', 'attempt'})
# Verbs of a wish: what their clause says is wanted, not so.
_WISHING = frozenset({'want', 'wish', 'hope', 'need', 'prefer'})
# Verbs that set a thing to a value: a bare number after their "to" is its setting.
_SETTING_VERBS = frozenset({'set', 'raise', 'lower', 'turn', 'adjust', 'change', 'reset'})
# Verbs of a device showing a value: a bare number as their object is its reading ("the
# thermostat says 22 now").
_SHOWING_VERBS = frozenset({'read', 'say', 'show', 'display'})

# Settings named by a word ("turned the heater up to high", "put the oven on low", "at the
# low setting"), and the nouns a setting word may come with.
_LEVELS = frozenset({'low', 'medium', 'high', 'max', 'maximum', 'min', 'minimum'})
_LEVEL_NOUNS = frozenset({'setting', 'speed', 'mode', 'power', 'heat'})
_LEVEL_VERBS = _SETTING_VERBS | {'switch', 'put'}
# Nouns of an appliance's programme or mode ("a quick wash", "eco mode", "the cotton cycle").
_MODE_NOUNS = frozenset({'mode', 'cycle', 'wash', 'programme', 'program', 'setting'})
# A bare noun after "on" that says how a device is, not where: "the laptop is on charge".
_ON_STATES = {'charge': 'charging', 'standby': 'standby'}
#: Verbs of starting an appliance ("started the dishwasher": running), on a programme or not.
STARTING = frozenset({'start', 'run'})
_BEGINNING = frozenset({'start', 'begin'})

# What only a device that is on does: "a television showing a football match", "a floor lamp
# glowing in the corner".
# What a device in the middle of it is: "the dishwasher's still running", "a tablet charging
# on the shelf" (a state of its own, which ends when the device says otherwise).
IN_PROGRESS = {'run': 'running', 'charge': 'charging', 'preheat': 'preheating', 'heat': 'heating',
               'boil': 'boiling', 'brew': 'brewing', 'defrost': 'defrosting', 'drain': 'draining',
               'spin': 'spinning'}
# Words right after "running" that say what a thing lacks or how it goes, not that it runs.
_RUNNING_SHORT = frozenset({'low', 'out', 'short', 'late', 'dry', 'hot'})
# Verbs that leave a thing doing something ("left the tap running", "kept the engine running").
LEFT_DOING = frozenset({'leave', 'keep'})
# What a device that has done it is: "the washer just finished", "the dishwasher has finished".
_DONE = {'finish': 'finished', 'complete': 'finished'}


class MeasureReading(SceneReading):
    """Readings with their unit, and the power a working device shows (a layer of a parse
    reading)."""

    def _unreal(self, tok: Token) -> bool:
        """A clause that states an intention, a possibility, an attempt or a condition, not a
        change: an infinitive ("to put"), a modal ("should move"), "tried putting", "if/before
        ...", an order ("Move the cup to the sink")."""
        if tok.dep_ == 'xcomp' and tok.head.lemma_.lower() in _TRYING:
            return True  # "tried putting the cup on the shelf": whether it worked is not said
        if tok.dep_ in {'ccomp', 'xcomp'} and tok.head.lemma_.lower() in _WISHING:
            return True  # "I want the kitchen clean": a wish
        if tok.dep_ == 'ccomp' and any(c.dep_ == 'mark' and c.lower_ in {'if', 'whether'}
                                       for c in tok.children):
            return True  # "I'm not sure if I locked the back door": a question, not a report
        return conditional(tok) or self._request(tok) or any(
            c.dep_ in {'aux', 'auxpass'} and c.i not in self.as_noun
            and (c.tag_ == 'MD' or (c.lower_ == 'to' and c.tag_ == 'TO')) for c in tok.children)

    def _working(self, names: dict[int, str]) -> list[StateChange]:
        """An appliance doing what only a device that is on does is on: "a television showing
        cartoons" (hung on it, or with it as subject), unless denied, asked or a plan; one in the
        middle of running or charging, or done with its cycle, is in that state ("the dishwasher's
        still running", "the washer just finished")."""
        found: list[StateChange] = []
        for tok in self.doc:
            lemma = tok.lemma_.lower()
            done = tok.tag_ == 'VBD' or (tok.tag_ == 'VBN' and any(c.lemma_ == 'have' for c in tok.children))
            under_way = IN_PROGRESS.get(lemma, '') if tok.tag_ == 'VBG' else (_DONE.get(lemma, '') if done
                                                                            else '')
            # "The robot vacuum started cleaning": a device that began doing something is at it.
            begun = tok.tag_ == 'VBG' and tok.dep_ == 'xcomp' and tok.head.tag_ == 'VBD' \
                and tok.head.lemma_.lower() in _BEGINNING
            under_way = under_way or (tok.lower_ if begun else '')
            working = lemma in WORKING and tok.tag_ in {'VBG', 'VBZ', 'VBP'}
            if not (working or under_way) or self._negated(tok) or self._asked(tok) or self._unreal(tok) \
                    or (begun and (self._negated(tok.head) or self._unreal(tok.head))):
                continue
            if under_way and any(c.dep_ in {'advmod', 'acomp', 'oprd', 'prt', 'prep'} and c.i == tok.i + 1
                                 and c.lower_ in _RUNNING_SHORT for c in tok.children):
                continue  # "the fridge is running low on milk", "running out of coffee": not at work
            # (Its own subject first: "Javier: The tablet is charging" hangs the verb on the speaker.)
            # ("it's charging now": the thing "it" stands for.)
            subject = tok.head if begun else tok
            things = self._things([c for c in subject.children if c.dep_ == 'nsubj'], names) or (
                [tok.head] if tok.dep_ == 'acl' else []) or self._left_doing(tok, names)
            # A machine the lexicon does not know runs too ("the hydraulic press is running").
            found += [StateChange(names[t.i], 'state', '', under_way) if under_way
                      else StateChange(names[t.i], 'power', '', 'on') for t in things
                      if t.i in names and ('appliance' in (kinds := (NOUN_TYPES.get(t.lemma_.lower()),
                                                                     NOUN_TYPES.get(names[t.i])))
                                           or (under_way and kinds == (None, None) and not is_person(t)))]
        return found

    def _left_doing(self, tok: Token, names: dict[int, str]) -> list[Token]:
        """The thing a verb of leaving leaves doing ``tok`` ("someone left the tap running in the
        bathroom", the participle read as a clause of "left")."""
        verb = tok.head
        if tok.dep_ not in {'advcl', 'xcomp', 'oprd'} or verb.lemma_.lower() not in LEFT_DOING \
                or self.doc[tok.i - 1].is_punct:
            return []  # (not "left the house, running to the bus")
        return [o for o in self._things([c for c in verb.children if c.dep_ == 'dobj'], names)
                if o.i < tok.i]

    def _level_settings(self, names: dict[int, str]) -> list[StateChange]:
        """An appliance set to a named level: "turned the bedroom heater up to high", "put the
        oven on low", "switched the heater on at the low setting" (read along the words: the
        small parser hangs such phrases anywhere)."""
        found: list[StateChange] = []
        for tok in self.doc:
            if tok.lower_ not in _LEVELS:
                continue
            nxt = self.doc[tok.i + 1].lower_ if tok.i + 1 < len(self.doc) else ''
            before = tok.i - 1
            if before >= 0 and self.doc[before].lower_ == 'the':
                before -= 1
            word = self.doc[before].lower_ if before >= 0 else ''
            if not (word in {'to', 'on'} and before == tok.i - 1) and not (
                    word in {'at', 'on', 'to'} and nxt in _LEVEL_NOUNS):
                continue
            verb = next((t for t in reversed(self.doc[tok.sent.start:before]) if t.lemma_ == 'be'
                         or (t.pos_ == 'VERB' and t.lemma_.lower() in _LEVEL_VERBS)), None)
            if verb is None or self._negated(verb) or self._asked(verb) or self._unreal(verb):
                continue
            # ("The heater is on the low setting": the subject of "is".)
            told = [c for c in verb.children if c.dep_ == 'nsubj'] if verb.lemma_ == 'be' \
                else self.doc[verb.i + 1:before]
            thing = next((t for t in told if t.i in names
                          and self.heads.get(t.i) == t.i and NOUN_TYPES.get(t.lemma_.lower()) == 'appliance'),
                         None)
            if thing is not None:
                found.append(StateChange(names[thing.i], 'setting', '', tok.lower_))
        return found

    def _modes(self, names: dict[int, str]) -> list[StateChange]:
        """An appliance on or set to a named programme or mode: "started the washing machine on
        a quick wash", "the dishwasher is on eco mode", "put the washer on, cotton cycle", "the
        fan is on high" (the setting: the words of the mode, or the level)."""
        found: list[StateChange] = []
        for tok in self.doc:
            prep = tok.head
            if tok.dep_ != 'pobj' or prep.lower_ not in {'on', 'to', 'at'} or not self.a_mode(tok):
                continue
            verb = prep.head
            if verb.lemma_.lower() not in _LEVEL_VERBS | STARTING | {'be'} or self._negated(verb) \
                    or self._asked(verb) or self._unreal(verb):
                continue
            things = [t for t in self._set_things(verb, names)
                      if NOUN_TYPES.get(t.lemma_.lower()) == 'appliance'
                      or NOUN_TYPES.get(names[t.i]) == 'appliance']
            words = [t.lower_ for t in tok.subtree if t.dep_ not in {'det', 'punct', 'prep'} and t.i <= tok.i]
            if tok.lower_ in _LEVEL_NOUNS and _LEVELS.intersection(words):
                continue  # "at the low setting": the level (_level_settings)
            found += [StateChange(names[t.i], 'setting', '', ' '.join(words)) for t in things]
        return found

    def _on_states(self, names: dict[int, str]) -> list[StateChange]:
        """A device "on charge" is charging, "on standby" on standby ("I put the phone on
        charge", "the TV is on standby"): a state, not a place (see :meth:`on_state`)."""
        found: list[StateChange] = []
        for tok in self.doc:
            if not self.on_state(tok):
                continue
            verb = tok.head.head
            if self._negated(verb) or self._asked(verb) or self._unreal(verb):
                continue
            found += [StateChange(names[t.i], 'state', '', _ON_STATES[tok.lower_])
                      for t in self._set_things(verb, names)]
        return found

    def _set_things(self, verb: Token, names: dict[int, str]) -> list[Token]:
        """The things a clause puts on a mode or a state: the subject of "is" ("the TV is on
        standby"), else the verb's object ("put the phone on charge", "the heater was put on low")."""
        roles = ('nsubj',) if verb.lemma_.lower() == 'be' else ('dobj', 'nsubjpass')
        return self._things([c for c in verb.children if c.dep_ in roles], names)

    @staticmethod
    def on_state(tok: Token) -> bool:
        """``tok`` is the bare noun of "on charge", "on standby"."""
        return tok.dep_ == 'pobj' and tok.head.lower_ == 'on' and tok.lower_ in _ON_STATES \
            and not any(c.dep_ in {'det', 'poss'} for c in tok.children)

    def a_mode(self, tok: Token) -> bool:
        """``tok`` names a programme, mode or level of an appliance ("a quick wash", "eco mode",
        "high"), not a place."""
        return tok.lemma_.lower() in _MODE_NOUNS or (tok.lower_ in _LEVELS and not list(tok.children))

    def _readings(self, names: dict[int, str]) -> list[StateChange]:
        """A value with its unit: "the thermostat is set to 22 degrees" (setting), "fridge
        temperature 4 C" (temperature: the measure noun), "battery at 40 percent" (level)."""
        found: list[StateChange] = []
        for num in self.doc:
            if not (num.pos_ == 'NUM' and num.like_num) and not _SIGNED.match(num.text):
                continue  # (the tagger calls "-18" punctuation: "Freezer temperature -18 C")
            unit = self._unit_of(num)
            if unit is None:
                continue
            sign = '-' if any(c.dep_ == 'quantmod' and c.lower_ == 'minus' for c in num.children) else ''
            value = sign + (f'{num.text} {unit.text.rstrip(".")}' if unit.i != num.i else num.text)
            holder = unit if unit.dep_ in {'pobj', 'attr', 'npadvmod', 'dobj', 'appos'} else num
            governor = holder.head
            setting = False
            if holder.dep_ == 'pobj':
                setting = _on_a_number(holder)
                if governor.lower_ not in {'at', 'to'} and not setting:
                    continue  # "for 20 minutes", "in 3 m"
                governor = governor.head
                if _particle(governor) and governor.head.lemma_.lower() in _SETTING_VERBS:
                    governor = governor.head  # "turned the thermostat up to 22": the verb's particle
            if governor.i == holder.i:
                continue
            attribute = 'level'
            subject: Token | None = governor
            if governor.pos_ in {'VERB', 'AUX'}:
                if governor.lemma_.lower() != 'be' or setting:
                    attribute = 'setting'  # "set to 22 degrees", "turned the oven to 180"
                # What is set, not who sets it: "I set the thermostat to 21 degrees".
                # (The nearest subject: after a speaker's name the parser may take an opening
                # word for one, "Carlos: Fine, the heating is on 22".)
                before = [c for c in governor.children if c.i < holder.i]
                subject = next((c for c in before if c.dep_ == 'dobj' and attribute == 'setting'), None) \
                    or next((c for c in reversed(before) if c.dep_ in {'nsubj', 'nsubjpass', 'dobj'}), None)
                if subject is None and governor.dep_ == 'acl':
                    subject = governor.head  # "thermostat set to 21 degrees"
                elif subject is None and governor.dep_ == 'conj':
                    # "The oven is still on and set to 200 degrees": the first verb's subject.
                    subject = next((c for c in governor.head.children
                                    if c.dep_ in {'nsubj', 'nsubjpass'}), None)
            elif holder.head.i == governor.i and holder.dep_ != 'pobj' and not self._abstract(governor) \
                    and unit.text != '%' and unit.lower_ != 'percent':
                continue  # "box 0.3 m ahead", "Spin 1.57 rad": a distance or a move, not a level
            if subject is None or self._negated(governor) or self._unreal(governor):
                continue
            if self._abstract(subject):
                attribute = subject.lemma_.lower()  # "the fridge temperature", "temperature of the fridge"
                thing = next((c for c in subject.children if c.i in names and c.dep_ in
                              {'compound', 'poss', 'nmod', 'amod'}), None)
                if thing is None:
                    of = next((c for c in subject.children if c.dep_ == 'prep' and c.lower_ == 'of'), None)
                    thing = next((g for g in of.children if g.i in names), None) if of is not None else None
                if thing is None and subject.i > 0 and subject.i - 1 in names:
                    thing = self.doc[subject.i - 1]
                subject = thing
            if subject is not None and subject.i in names:
                found.append(StateChange(names[subject.i], attribute, '', value))
        return found

    def _unit_of(self, num: Token) -> Token | None:
        """The unit a number is counted in ("22 degrees", "40 %", "4 C"), or the number
        itself for a bare reading after "at"/"to"; None for a count of things ("3 cups")."""
        candidates = [num.head] if num.dep_ == 'nummod' and num.head.i > num.i else []
        if num.i + 1 < len(self.doc):
            candidates.append(self.doc[num.i + 1])
        for cand in candidates:
            word = cand.lower_.rstrip('.')
            if cand.text == '%' or word in units() or (word in self.stop and cand.pos_ in NOMINAL
                                                       and not self._abstract_measure(cand)):
                return cand
        # A bare number a thing is set to: "set the upstairs heating to 20".
        verb = num.head.head
        if _particle(verb):
            verb = verb.head
        if num.dep_ == 'pobj' and num.head.lower_ == 'to' and verb.lemma_.lower() in _SETTING_VERBS \
                and not any(c.dep_ in {'prep', 'pobj'} or c.pos_ in NOMINAL for c in num.children):
            return num
        if _on_a_number(num):
            return num
        if num.dep_ == 'dobj' and num.head.lemma_.lower() in _SHOWING_VERBS and not any(
                c.pos_ in NOMINAL for c in num.children) and any(
                c.dep_ == 'nsubj' and c.pos_ == 'NOUN' and NOUN_TYPES.get(c.lemma_.lower()) != 'person'
                for c in num.head.children):
            return num
        return None

    def _abstract_measure(self, tok: Token) -> bool:
        """"temperature", "level": what is measured, not a unit (a number before it is
        its value: "temperature 4 C")."""
        return tok.dep_ in {'ROOT', 'nsubj'} and any(c.dep_ == 'compound' for c in tok.children)


def _on_a_number(num: Token) -> bool:
    """"the heating is on 22", "the oven's on 180": a bare number a device is on is its setting."""
    prep = num.head
    return num.dep_ == 'pobj' and prep.lower_ == 'on' and prep.head.lemma_.lower() == 'be' \
        and not any(c.pos_ in NOMINAL or c.dep_ == 'prep' for c in num.children)


def _particle(tok: Token) -> bool:
    """A verb's particle ("turned the heating up"), also where the parse made it an adverb
    with a particle's tag ("I've turned the thermostat down to 19")."""
    return tok.dep_ == 'prt' or (tok.dep_ == 'advmod' and tok.tag_ == 'RP')
