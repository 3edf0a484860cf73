"""The state changes a parse reports: results, placements and readings of measures."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import (
    NOUN_TYPES,
    switch_verbs,
)
from brainmem_ros.encoders.reading_base import (
    DIRECTIONS,
    HELD,
    PLACE_PREPS,
    POWER,
    RESTING_PREPS,
    has_object,
    indefinite,
)
from brainmem_ros.encoders.reading_measures import MeasureReading
from brainmem_ros.encoders.reading_scenes import HANGING
from brainmem_ros.memory.types import StateChange, normalise_name

if TYPE_CHECKING:
    from spacy.tokens import Token

# Prepositions of a goal ("to the sink"), as opposed to those of a resting place ("in the kitchen").
_GOAL_PREPS = frozenset({'to', 'into', 'onto'})
# Verbs of taking a thing with a particle ("took out", "picked up", "lifted down") and of
# gripping it: the thing is held afterwards.
_TAKING = frozenset({'take', 'pick', 'lift', 'get', 'fetch'})
_TAKING_GRIP = frozenset({'grab', 'grasp', 'grip', 'borrow'})
# Words of a time to come: "I'm opening it later" is a plan.
_LATER = frozenset({'later', 'tomorrow', 'tonight', 'soon', 'afterwards', 'next', 'after'})
_HOLDING = frozenset({'hold', 'carry', 'hug', 'clutch', 'cradle', 'cuddle'})
# Verbs that set an appliance going ("started the dishwasher": running).
_STARTING = frozenset({'start', 'run'})
# Verbs whose "into" is where the contents went ("emptied the bin into the wheelie bin").
_EMPTYING = frozenset({'empty', 'drain'})
# Verbs of switching a thing on or off ("a lamp switched on").
_SWITCHING = frozenset({'switch', 'turn', 'power', 'flip'})
# Words of degree between a thing and its state ("curtains wide open").
_DEGREES = frozenset({'wide', 'half', 'partly', 'partially', 'slightly', 'fully', 'halfway'})
_PARTIAL = frozenset({'half', 'partly', 'partially', 'slightly', 'halfway'})


class StateReading(MeasureReading):
    """The state changes a parse reports (a layer of a parse reading)."""

    def state_changes(self) -> tuple[StateChange, ...]:
        """The state changes the parse reports."""
        names, own = self._names_by_token()
        found: list[StateChange] = []
        for tok in self.doc:
            if self._asked(tok):
                continue  # "Is the back door locked?" states nothing
            word = tok.lower_
            preposition = any(c.dep_ in {'pobj', 'pcomp'} for c in tok.children)
            if word in self.states and tok.pos_ in {'ADJ', 'VERB', 'ADP', 'ADV'} and not (
                    tok.dep_ == 'amod' and tok.head.i > tok.i) and not preposition \
                    and not has_object(tok) and not (tok.dep_ == 'prt' and word in POWER) \
                    and not self._denied(tok) and not self._unreal(tok) \
                    and not (tok.head.i != tok.i and tok.head.pos_ in {'VERB', 'AUX'}
                             and self._unreal(tok.head)):
                # ("The garage door is not locked", "If the stove is hot", "Please turn the oven
                # on at six": no state.)
                subject = self._subject_of_state(tok, names)
                if subject:
                    found.append(StateChange(subject, 'power' if word in POWER else 'state',
                                             '', self._partial(tok) + word))
            if (tok.pos_ in {'VERB', 'AUX'} or has_object(tok)) and not self._negated(tok) \
                    and not self._unreal(tok):
                found.extend(self._result_state(tok, names))
                found.extend(self._holding(tok, names) or self._placement(tok, names))
        found.extend(self._scene(names))
        found.extend(self._switched(names))
        found.extend(self._working(names))
        found.extend(self._level_settings(names))
        found.extend(self._readings(own))
        return _in_sequence(found)

    def _partial(self, tok: Token) -> str:
        """The word of part degree before a state, with a space ("half " of "half closed",
        "half-open"): a window half open is not open. Degrees of whole ("wide open") add nothing."""
        before = tok.i - 1
        if before > 0 and self.doc[before].text == '-':
            before -= 1
        word = self.doc[before].lower_ if before >= 0 else ''
        return f'{word} ' if word in _PARTIAL else ''

    def _names_by_token(self) -> tuple[dict[int, str], dict[int, str]]:
        """The entity name each token of a mention belongs to ("car" and "keys" of "the car
        keys", whichever the parser made the object), and the same with the robot's own
        parts, which have readings ("battery at 40 percent") but no place in the world."""
        names: dict[int, str] = {}
        own: dict[int, str] = {}
        self.heads = {}
        # "Lucía: it's in my backpack": who speaks is no thing the utterance places.
        tag = next((t.i for t in self.doc[1:3] if t.text == ':'), 0)
        speaker = tag if all(t.is_title and t.is_alpha for t in self.doc[:tag]) else 0
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
        return names, own

    def _switched(self, names: dict[int, str]) -> list[StateChange]:
        """A thing switched on or off by a verb with no object: "a floor lamp switched on".

        Also "the TV turned off" and "a switched-off television". An act with its object ("she
        turned on the TV") is the state layer's; a person is switched nothing ("Sam switched off").
        """
        found: list[StateChange] = []
        for tok in self.doc:
            verb = tok.head
            if tok.lower_ not in POWER or tok.dep_ != 'prt' or verb.lemma_ not in _SWITCHING \
                    or verb.tag_ not in {'VBN', 'VBD'} or has_object(verb) or self._negated(verb) \
                    or self._asked(verb) or any(self._unreal(a) for a in (verb, *verb.ancestors)):
                continue
            before = verb.i - 1
            thing = self.doc[before] if before >= 0 else verb
            if before in names and self.heads.get(before) == before and tok.i == verb.i + 1 \
                    and thing.pos_ != 'PROPN' and NOUN_TYPES.get(thing.lemma_.lower()) != 'person':
                found.append(StateChange(names[before], 'power', '', tok.lower_))  # "lamp switched on"
            elif verb.dep_ == 'amod' and verb.head.i in names and verb.head.i > tok.i:
                found.append(StateChange(names[verb.head.i], 'power', '', tok.lower_))  # "switched-off TV"
        return found

    def _subject_of_state(self, tok: Token, names: dict[int, str]) -> str:
        before = tok.i - 1
        while before > 0 and self.doc[before].lower_ in _DEGREES:
            before -= 1  # "curtains wide open", "the window half closed"
        if before >= 0 and self.heads.get(before) == before and before in names:
            # Right after the thing, however the parser hung it: "Door check: garage door
            # OPEN", "left the door open".
            return names[before]
        verb = self.doc[before] if before >= 0 else tok
        if verb.tag_ in {'VBN', 'VBD'} and verb.i != tok.i:
            # Right after a verb of its own subject: "grey curtains drawn closed", "the gate swung shut".
            things = self._things([c for c in verb.children if c.dep_ in {'nsubj', 'nsubjpass'}], names)
            if things:
                return names[things[0].i]
        if tok.head.i in names and tok.head.i < tok.i and self.heads.get(tok.head.i) == tok.head.i:
            return names[tok.head.i]  # "door ajar" hung on the door
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
                        return names[things[0].i]
        if tok.i > 0 and tok.i - 1 in names:
            return names[tok.i - 1]
        return ''

    def _result_state(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"Closed the garage door" -> door.state closed; "emptied the bin" -> empty;
        "turned off the lamp" -> lamp.power off. The state is the verb's participle when
        that is a state word, or the adjective the verb is made from ("opened" -> open);
        only a done act (past tense or participle) on a definite thing counts."""
        # "switched off the lights" is parsed with the object under the particle, or with the
        # particle as a preposition right after the verb.
        particles = [c for c in tok.children if c.dep_ == 'prt' or (
            c.dep_ == 'prep' and c.lower_ in POWER
            and (c.i == tok.i + 1 or not any(g.dep_ == 'pobj' for g in c.children)))
            or (c.dep_ == 'advmod' and c.lower_ in POWER)]  # "switched the light back on"
        candidates = [g for c in particles for g in c.children if g.dep_ == 'pobj']
        said = [c for c in [*tok.children, *candidates] if c.dep_ in {'dobj', 'obj', 'pobj'}]
        objects = [o for o in self._things(said, names) if not indefinite(o)]
        if not objects and tok.tag_ == 'VBN' and tok.dep_ == 'acl' and tok.head.i in names:
            objects = [tok.head]  # "kitchen light left on"
        if not objects and not any(c.dep_ in {'nsubj', 'dobj'} for c in tok.children):
            # "is plugged in but switched off": a passive's subject, shared by its joined verbs.
            passive = tok.head if tok.dep_ == 'conj' else tok
            objects = self._things([c for c in passive.children if c.dep_ == 'nsubjpass'], names)
        if not objects or (tok.tag_ not in {'VBD', 'VBN'} and tok.pos_ == 'VERB' and not self._doing(tok)):
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
        elif lemma in _STARTING and appliances and tok.tag_ in {'VBD', 'VBN'}:
            attribute, value = 'state', 'running'  # "started the dishwasher"
        elif lemma in self.states and (word.endswith('ed') or word not in self.states):
            attribute, value = 'state', lemma
        elif tok.tag_ == 'VBG' and (done := next((f for f in (lemma + 'd', lemma + 'ed')
                                                  if f in self.states), '')):
            attribute, value = 'state', done  # "closing the door": closed
        elif word in self.states and word not in POWER:
            attribute, value = 'state', word
        else:
            return []
        return [StateChange(names[o.i], attribute, '', value) for o in objects]

    @staticmethod
    def _doing(tok: Token) -> bool:
        """``tok`` is being done as it is said ("I'm opening the window": open from now on),
        not planned ("I'm opening it later")."""
        now = any(c.dep_ == 'aux' and c.lemma_.lower() == 'be' and c.tag_ in {'VBP', 'VBZ'}
                  for c in tok.children)
        return tok.tag_ == 'VBG' and now and not any(c.lower_ in _LATER for c in tok.subtree)

    def _placement(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"moved X from A to B", "X is on Y", "hung X on Y", "X is leaning against Y":
        X.location from A to B. "took X from A" with no destination: X was at A and is
        now held (the value :data:`HELD`) by whoever took it."""
        copula = tok.lemma_.lower() == 'be' or tok.pos_ == 'AUX'
        # A caption's "X hanging from Y, ...": X hangs, whatever noun the parser made its object.
        hung = self._verb_lemma(tok) in HANGING and tok.tag_ == 'VBG' and not any(
            c.dep_ in {'aux', 'auxpass'} for c in tok.children)
        if copula or (hung and any(c.dep_ == 'nsubj' for c in tok.children)):
            movers = self._things([c for c in tok.children if c.dep_ == 'nsubj'], names)
        else:
            movers = self._things([c for c in tok.children if c.dep_ in {'dobj', 'nsubjpass'}], names)
        if self._verb_lemma(tok) in _EMPTYING:
            return []
        transitive = bool(movers) and not copula and not hung
        if not movers and not copula and not has_object(tok):
            # "the umbrella is leaning against the rack": the subject is what is placed; a verb
            # joined to one with a subject shares it ("an umbrella opened up and drying on the floor").
            subjects = [c for c in tok.children if c.dep_ == 'nsubj']
            if not subjects and tok.dep_ == 'conj' and tok.tag_ == 'VBG':
                subjects = [c for c in tok.head.children if c.dep_ == 'nsubj']
            movers = self._things(subjects, names)
        movers = [m for m in movers if not any(c.dep_ == 'det' and c.lower_ == 'no' for c in m.children)
                  and not self.depicted(m)]
        if not movers or (tok.tag_ == 'VBG' and tok.dep_ in {'advcl', 'pcomp'}
                          and not any(c.dep_ == 'aux' for c in tok.children)):
            return []  # "while carrying it to the sink": under way, not done
        done = tok.tag_ in {'VBD', 'VBN'} or tok.i in self.as_verb or (
            tok.tag_ == 'VB' and self._inflected(tok))
        preps = [c for c in tok.children if c.dep_ in {'prep', 'dative'}]  # "gave the drill to Hannah"
        # "next to", "close to"; "left the umbrella drying in the tub"
        preps += [g for c in tok.children if c.dep_ in {'acomp', 'advmod'} or (
            c.dep_ == 'xcomp' and c.tag_ in {'VBG', 'VBN'} and not has_object(c))
                  for g in c.children if g.dep_ == 'prep']
        if transitive:
            # "moved the keys to the drawer" with the phrase hung on the object (or on
            # the head of its name when the parser split it).
            # (Only the verb's own object: a pronoun's antecedent in another clause keeps its
            # phrases, "found the charger under the sofa and put it on the shelf".)
            hangers = dict.fromkeys(t for m in movers if m.dep_ == 'dobj' and m.head.i == tok.i
                                    for t in (m, self.doc[self.heads.get(m.i, m.i)]))
            preps += [g for m in hangers for g in m.children if g.dep_ == 'prep' and g not in preps]
        preps += [g for g in self._onward(preps, names) if g not in preps]
        preps.sort(key=lambda p: p.i)
        mover_names = {names[m.i] for m in movers}
        # A goal phrase naming a thing ("to the sink", "into the drawer") is where a moved
        # thing went, whatever resting phrase comes first: a scene set before the verb ("In
        # the kitchen, moved the mug to the sink") or where the thing stood ("moved the cup
        # on the table to the shelf", which is where it came from). Not a side of a thing
        # ("to the left of the sink": the first place phrase says more).
        goal = next((p for p in preps if transitive and p.lower_ in _GOAL_PREPS
                     and p.head.pos_ not in {'ADV', 'ADJ'}  # "next to the sink" is no goal
                     and any(o.dep_ == 'pobj' and o.i in names and names[o.i] not in mover_names
                             and not any(c.lower_ == 'of' for c in o.children) for o in p.children)), None)
        before = after = ''
        destination = False
        hanging = self._verb_lemma(tok) in HANGING
        for outer in preps:
            word, prep = outer.lower_, outer
            if word == 'from' and hanging:
                word = 'on'  # "hanging from a hook": on the hook
            if word == 'out' and any(c.lower_ == 'of' for c in outer.children):
                word, prep = 'from', next(c for c in outer.children if c.lower_ == 'of')
            if not transitive and not copula and word not in RESTING_PREPS:
                continue  # "looked at the table", "talked to Anna": no place of the subject
            if word == 'from' and not done and goal is None:
                continue  # "watches the door from the rug", "a tower out of blocks"
            destination = destination or word in PLACE_PREPS
            target = self._place_of(prep, names)
            if not target or target in mover_names:
                continue
            if word == 'from':
                before = before or target
            elif goal is not None and outer is not goal:
                if word in PLACE_PREPS and max(m.i for m in movers) < outer.i < goal.i and not before:
                    before = target  # "the cup on the table to the shelf": where it stood
            elif word in PLACE_PREPS and not after:
                after = target
        if not after and transitive and done:
            # "moved the plant from the balcony inside": somewhere it was taken, not held.
            after = next((t.lower_ for t in self._clause(tok)
                          if t.dep_ == 'advmod' and t.lower_ in DIRECTIONS), '')
        gripping = self._doing(tok) and self._verb_lemma(tok) in _TAKING_GRIP  # "I'm borrowing the key"
        if not after and transitive and (done or gripping) and not destination \
                and (before or self._taking(tok)):
            after = self.speaker if self._said_by_speaker(tok) else HELD  # "Dana: I grabbed my phone"
        if not after:
            return []
        return [StateChange(name, 'location', before, after) for name in dict.fromkeys(
            names[m.i] for m in movers)]

    def _holding(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"Ethan holding a bottle of wine", "Mia is carrying the laundry basket", "a little girl
        hugging a teddy bear": a person who holds or carries a thing has it, wherever the two are.
        So does who speaks of what "I have" ("Zoe: I've got the tablet now")."""
        lemma, mine = self._verb_lemma(tok), self._said_by_speaker(tok)
        having = mine and lemma in {'have', 'get'} and (tok.tag_ == 'VBP' or (
            tok.tag_ == 'VBN' and any(c.dep_ == 'aux' and c.lemma_.lower() == 'have' for c in tok.children)))
        if not having and (lemma not in _HOLDING or tok.tag_ not in {'VBG', 'VBZ', 'VBP', 'VBD'}):
            return []
        # The subject, or the name a participle is hung on in a caption ("Priya carrying ...").
        holders = [c for c in tok.children if c.dep_ == 'nsubj'] + ([tok.head] if tok.dep_ == 'acl' else [])
        people = [names[c.i] for c in holders if c.i in names and (
            c.pos_ == 'PROPN' or NOUN_TYPES.get(c.lemma_.lower()) == 'person')]  # "a girl hugging a teddy"
        people += [self.speaker] if mine else []
        # Not a second "object" after a phrase of the verb's ("carrying a box up a staircase",
        # which the parser may read as a second object).
        phrase = min((c.i for c in tok.children if c.dep_ in {'prep', 'prt'}), default=len(self.doc))
        if any(c.dep_ == 'prep' and c.lower_ in _GOAL_PREPS and self._place_of(c, names)
               for c in tok.children):
            return []  # "a person carrying a laptop into the office": the office, where it is going
        things = self._things([c for c in tok.children if c.dep_ == 'dobj' and c.i < phrase], names)
        return [StateChange(names[t.i], 'location', '', people[0]) for t in things] if people else []

    def _said_by_speaker(self, tok: Token) -> bool:
        """``tok``'s subject is "I" in an utterance whose speaker is named ("Zoe: I ...")."""
        return bool(self.speaker) and any(c.dep_ == 'nsubj' and c.lower_ == 'i' for c in tok.children)

    def _taking(self, tok: Token) -> bool:
        """"took out the tape measure", "picked up the cup", "grabbed the keys": the thing is
        held by whoever took it, wherever it was."""
        lemma = self._verb_lemma(tok)
        particle = {c.lower_ for c in tok.children if c.dep_ == 'prt'}
        return lemma in _TAKING_GRIP or (lemma in _TAKING and bool(particle & {'out', 'up', 'down'}))

    @staticmethod
    def _clause(tok: Token) -> list[Token]:
        """The words of the clause of verb ``tok``, without the clauses joined to it."""
        out: list[Token] = []
        todo = [c for c in tok.children if c.dep_ not in {'conj', 'cc', 'advcl', 'relcl', 'ccomp'}]
        while todo:
            t = todo.pop()
            out.append(t)
            todo += [c for c in t.children if c.dep_ not in {'conj', 'cc', 'relcl', 'acl', 'advcl'}]
        return out

    def _onward(self, preps: list[Token], names: dict[int, str]) -> list[Token]:
        """The goal phrase of "from A to B" when the parser hung it on A ("the counter to the
        dishwasher"): a "to/into/onto" phrase on a named thing of the source phrase says where
        the mover went. A place phrase there ("from the cupboard in the kitchen"), a goal in a
        clause ("the shelf that leads to the hall") or on a word that is not a thing ("the table
        next to the sink") stays the source's."""
        sources = [p for p in preps if p.lower_ == 'from']
        sources += [c for p in preps if p.lower_ == 'out' for c in p.children if c.lower_ == 'of']
        things = [o for s in sources for o in s.children if o.dep_ == 'pobj']
        goals: list[Token] = []
        while things:  # down the chain of nouns and their phrases: "from the shelf above the sink to ..."
            thing = things.pop()
            for child in thing.children:
                if child.dep_ == 'conj':
                    things.append(child)
                elif child.dep_ == 'prep' and child.lower_ in _GOAL_PREPS and thing.i in names:
                    goals.append(child)
                elif child.dep_ == 'prep':
                    things += [o for o in child.children if o.dep_ == 'pobj']
                elif child.i in names and names[child.i] == names.get(thing.i):
                    things.append(child)  # another word of the same name ("the kitchen counter")
        return goals

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
