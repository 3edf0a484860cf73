"""Where a parse puts things: placements, hand-overs, holding and taking (a layer of a parse
reading, under the state layer of :mod:`~brainmem_ros.encoders.reading_states`).

"moved X from A to B", "X is on Y", "hung X on Y", "X is leaning against Y": X's location
from A to B. "took X from A" with no destination: X was at A and is now held. "Ethan holding
a bottle": with Ethan. Which thing a pronoun stands for is the mention layer's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import NOUN_TYPES, PLACING_VERBS
from brainmem_ros.encoders.reading_base import (
    DIRECTIONS,
    HELD,
    NOMINAL,
    PLACE_PREPS,
    RESTING_PREPS,
    an_activity,
    has_object,
    indefinite,
    is_person,
    narrated,
    place_preps,
    settling,
    what_for,
)
from brainmem_ros.encoders.reading_measures import LEFT_DOING, MeasureReading
from brainmem_ros.encoders.reading_scenes import HANGING, SCENE_PREPS
from brainmem_ros.memory.types import StateChange

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
_HOLDING = frozenset({'hold', 'carry', 'hug', 'clutch', 'cradle', 'cuddle', 'wear', 'point', 'aim'})
# Verbs of taking after which a person named as the subject has the thing (not "got", "fetched"
# for someone, or "gripped").
_TOOK = (_TAKING | _TAKING_GRIP) - {'get', 'fetch', 'grip'}
# Verbs of giving a thing to someone ("gave Grandma her pills").
_GIVING = frozenset({'give', 'hand', 'pass', 'bring', 'lend', 'send', 'throw', 'toss', 'offer', 'return',
                     'fetch'})
# Verbs of going somewhere ("entered the kitchen", "ran upstairs").
_GOING = frozenset({'enter', 'go', 'come', 'run', 'walk', 'head', 'move', 'wander', 'climb', 'hurry', 'rush',
                    'return', 'step'})
# Words before "on" that say what a thing lacks, not where it is ("low on ink").
_SUPPLY = frozenset({'low', 'short'})
# Verbs that say how a thing is, as "be" does ("the plant looks dry").
_LINKING = frozenset({'look', 'seem', 'appear', 'feel', 'smell', 'taste', 'sound', 'remain', 'stay'})
# Verbs of shifting a thing along, which leave it where it stops, not in hand ("moved the chair
# away from the window").
_SHIFTING = frozenset({'move', 'push', 'slide', 'drag', 'shift', 'roll', 'kick', 'nudge', 'shove'})
# Verbs whose "into" is where the contents went ("emptied the bin into the wheelie bin").
_EMPTYING = frozenset({'empty', 'drain'})
# What a robot's hand does when it grips a thing ("the gripper closed on the bottle").
_CLOSING = frozenset({'close', 'clamp', 'tighten'})


class PlaceReading(MeasureReading):
    """The places a parse gives things (a layer of a parse reading)."""

    @staticmethod
    def _doing(tok: Token) -> bool:
        """``tok`` is being done as it is said ("I'm opening the window": open from now on),
        not planned ("I'm opening it later")."""
        now = any(c.dep_ == 'aux' and c.lemma_.lower() == 'be' and c.tag_ in {'VBP', 'VBZ'}
                  for c in tok.children)
        if tok.tag_ == 'VBG' and tok.dep_ == 'advcl' and not now and tok.head.i != tok.i \
                and not any(c.dep_ in {'nsubj', 'mark'} for c in tok.children):
            # "Opening the garage door again, I'm taking the car out": done as the clause it
            # opens is (not "after opening", "while opening": those say when).
            now = PlaceReading._doing(tok.head)
        return tok.tag_ == 'VBG' and now and not any(c.lower_ in _LATER for c in tok.subtree)

    def _placement(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"moved X from A to B", "X is on Y", "hung X on Y", "X is leaning against Y":
        X.location from A to B. "took X from A" with no destination: X was at A and is
        now held (the value :data:`HELD`) by whoever took it."""
        copula = tok.lemma_.lower() == 'be' or tok.pos_ == 'AUX'
        # A caption's "X hanging from Y, ...": X hangs, whatever noun the parser made its object.
        hung = self._verb_lemma(tok) in HANGING and tok.tag_ == 'VBG' and not any(
            c.dep_ in {'aux', 'auxpass'} for c in tok.children)
        existential = copula and any(c.dep_ == 'expl' for c in tok.children)
        if existential:
            # "There's a spider in the bathtub", "there are two mugs on the table".
            movers = self._things([c for c in tok.children if c.dep_ == 'attr'], names)
        elif copula or (hung and any(c.dep_ == 'nsubj' for c in tok.children)):
            movers = self._things([c for c in tok.children if c.dep_ == 'nsubj'], names)
        else:
            movers = self._things([c for c in tok.children if c.dep_ in {'dobj', 'nsubjpass'}
                                   and not an_activity(c)], names)
            if not movers and tok.dep_ == 'conj' and not has_object(tok) and (tok.tag_ == 'VBN' or (
                    tok.tag_ == 'VBD' and not any(c.dep_ == 'nsubj' for c in tok.children))):
                # "The iron has been unplugged and put away in the cupboard": the passive's subject
                # ("The hose was rolled up and hung in the shed": "hung" tagged a past tense).
                movers = self._things([c for c in tok.head.children if c.dep_ == 'nsubjpass'], names)
        if self._verb_lemma(tok) in _EMPTYING:
            return []
        transitive = bool(movers) and not copula and not hung
        if not movers and not copula and not has_object(tok):
            # "the umbrella is leaning against the rack": the subject is what is placed; a verb
            # joined to one with a subject shares it ("an umbrella opened up and drying on the floor").
            subjects = [c for c in tok.children if c.dep_ == 'nsubj']
            # ("The cup slipped out of my gripper and fell on the floor": both past.)
            shared = tok.tag_ == 'VBG' or tok.tag_ == tok.head.tag_ == 'VBD'
            if not subjects and tok.dep_ == 'conj' and shared:
                subjects = [c for c in tok.head.children if c.dep_ == 'nsubj']
            movers = self._things(subjects, names)
        movers = [m for m in movers if not any(c.dep_ == 'det' and c.lower_ == 'no' for c in m.children)
                  and not self.depicted(m)]
        if not movers or (tok.tag_ == 'VBG' and tok.dep_ in {'advcl', 'pcomp'}
                          and not any(c.dep_ == 'aux' for c in tok.children)):
            return []  # "while carrying it to the sink": under way, not done
        done = tok.tag_ in {'VBD', 'VBN'} or tok.i in self.as_verb or (
            tok.tag_ == 'VB' and self._inflected(tok))
        taken = narrated(tok) and self._verb_lemma(tok) in _TOOK  # "C picks a cup from the table"
        preps = [c for c in tok.children if c.dep_ in {'prep', 'dative'}]  # "gave the drill to Hannah"
        # "next to", "close to"; "left the umbrella drying in the tub" (or read as a clause of
        # "left": "left the tap running in the bathroom")
        doing = {'xcomp', 'advcl'} if self._verb_lemma(tok) in LEFT_DOING else {'xcomp'}
        preps += [g for c in tok.children if c.dep_ in {'acomp', 'advmod', 'oprd'} or (
            ((c.dep_ in doing and c.tag_ in {'VBG', 'VBN'}) or settling(c))
            and not has_object(c) and not self.doc[c.i - 1].is_punct) for g in c.children if g.dep_ == 'prep']
        if existential:
            preps += [g for m in movers if m.dep_ == 'attr' for g in m.children if g.dep_ == 'prep']
        elif (copula or self._verb_lemma(tok) in _LINKING) \
                and not any(p.lower_ in RESTING_PREPS for p in preps):
            # "The plant on the windowsill looks dry", "the milk in the fridge has expired": the
            # phrase that tells which thing also says where it is, when the clause says no place.
            preps += [g for m in movers if m.dep_ == 'nsubj' for g in m.children
                      if g.dep_ == 'prep' and g.lower_ in SCENE_PREPS]
        if transitive:
            # "moved the keys to the drawer" with the phrase hung on the object (or on the head of
            # its name when the parser split it). (Only the verb's own object: a pronoun's antecedent
            # in another clause keeps its phrases, "found the charger under the sofa and put it on
            # the shelf".)
            hangers = dict.fromkeys(t for m in movers if m.dep_ == 'dobj' and m.head.i == tok.i
                                    for t in (m, self.doc[self.heads.get(m.i, m.i)]))
            # A pronoun object's own phrases ("and left it on the porch step to dry").
            hangers.update(dict.fromkeys(c for c in tok.children if c.dep_ == 'dobj' and c.pos_ == 'PRON'))
            preps += [g for m in hangers for g in m.children if g.dep_ == 'prep' and g not in preps]
        preps += [g for g in self._onward(preps, names) if g not in preps]
        # "Sam is in the garden with the dog": who is with a person is where the person is
        # (asked once: the companions join the movers below); so is what a person or an animal
        # went somewhere with ("the dog ran off with it into the garden").
        going = done and self._verb_lemma(tok) in _GOING
        accompanied = (copula or going) and all(
            is_person(m) or (going and NOUN_TYPES.get(m.lemma_.lower()) == 'animal') for m in movers)
        if accompanied:
            # The parser hangs the phrase on the place or on the verb.
            preps += [g for p in preps if p.lower_ in PLACE_PREPS for o in p.children if o.dep_ == 'pobj'
                      for g in o.children if g.dep_ == 'prep' and g.lower_ == 'with' and g not in preps]
        preps.sort(key=lambda p: p.i)
        # "switched on the red lamp on the desk and the white lamp in the hallway": a thing listed with
        # a place of its own is there (:meth:`gapped`); "put the milk and the bread in the bread bin":
        # the last one's place is all of theirs when the verb has none.
        if len(movers) > 1 and transitive and any(p.lower_ in PLACE_PREPS for p in preps):
            movers = [m for m in movers if m.dep_ != 'conj' or not place_preps(m)] or movers
        elif len(movers) > 1 and transitive and movers[-1].dep_ == 'conj':
            preps += place_preps(movers[-1])
        mover_names = {names[m.i] for m in movers}
        # A goal phrase naming a thing ("to the sink", "into the drawer") is where a moved
        # thing went, whatever resting phrase comes first: a scene set before the verb ("In
        # the kitchen, moved the mug to the sink") or where the thing stood ("moved the cup
        # on the table to the shelf", which is where it came from). Not a side of a thing
        # ("to the left of the sink": the first place phrase says more).
        goal = next((p for p in preps if transitive and p.lower_ in _GOAL_PREPS and not what_for(p, preps)
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
            if word == 'to' and outer.head.lower_ in {'next', 'close'}:
                word = 'beside'  # "lying next to the bed": where it rests, not where it goes
            if word == 'out' and any(c.lower_ == 'of' for c in outer.children):
                word, prep = 'from', next(c for c in outer.children if c.lower_ == 'of')
            if word == 'with':
                # "the keys are with Maria": she has them (not "the box with the lid"); who is
                # with a person is where the person is ("Sam is in the garden with the dog").
                if copula and not after and not any(is_person(m) for m in movers):
                    after = next((names[o.i] for o in outer.children if o.dep_ == 'pobj' and o.i in names
                                  and is_person(o)), '')
                elif accompanied:
                    # (Not a look: "went into the kitchen with a smile".)
                    movers += [t for t in self._things([o for o in outer.children if o.dep_ == 'pobj'], names)
                               if copula or is_person(t) or NOUN_TYPES.get(t.lemma_.lower()) is not None]
                continue
            if what_for(outer, preps):
                continue  # "put the chicken in the fridge to thaw": what for, not where
            if word == 'on' and outer.i and self.doc[outer.i - 1].lower_ in _SUPPLY:
                continue  # "the printer is low on ink", "running short on milk": what it lacks
            if not transitive and not copula and word not in RESTING_PREPS and not (
                    word in {'at', 'to'} and self._verb_lemma(tok) in PLACING_VERBS):
                continue  # "looked at the table", "talked to Anna": no place (but "set down at dock 2")
            if word == 'from' and not (done or taken) and goal is None:
                continue  # "watches the door from the rug", "a tower out of blocks"
            destination = destination or word in PLACE_PREPS
            target = self._place_of(prep, names) or self._gripped(prep, word)
            if not target or target in mover_names or any(
                    o.dep_ == 'pobj' and (self.a_mode(o) or self.on_state(o)) for o in prep.children):
                continue  # (nor "on a quick wash", a programme, "on charge": see _modes, _on_states)
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
        gripping = taken or (self._doing(tok) and self._verb_lemma(tok) in _TAKING_GRIP)  # "I'm borrowing it"
        if not after and transitive and (done or gripping) and not destination \
                and (before or self._taking(tok)) and self._verb_lemma(tok) not in _SHIFTING:
            after = self.speaker if self._said_by_speaker(tok) else HELD  # "Dana: I grabbed my phone"
        if not after:
            return []
        return [StateChange(name, 'location', before, after) for name in dict.fromkeys(
            names[m.i] for m in movers)]

    def gapped(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"I put the milk in the fridge and the bread in the bread bin", "the eggs went into the
        fridge door and the flour onto the pantry shelf": a thing joined to the verb (or to its
        object: "the lamp on the desk and the fan in the hall") with a place phrase of its own, the
        verb left out, went there as well (asked only when ``tok`` placed its own thing)."""
        found: list[StateChange] = []
        joined = [c for c in tok.children if c.dep_ == 'conj' and c.i in names and c.pos_ in NOMINAL]
        # "left the keys on the hook and the wallet in the drawer": joined to the place instead.
        places = [o for h in (tok, *(c for c in tok.children if c.dep_ == 'dobj')) for p in h.children
                  if p.dep_ == 'prep' and p.lower_ in PLACE_PREPS for o in p.children if o.dep_ == 'pobj']
        joined += [c for o in places for c in o.children
                   if c.dep_ == 'conj' and c.i in names and c.pos_ in NOMINAL]
        joined += [c for o in tok.children if o.dep_ == 'dobj' for c in o.children
                   if c.dep_ == 'conj' and c.i in names and c.pos_ in NOMINAL and place_preps(c)]
        for thing in joined:
            place = next((p for prep in place_preps(thing) if (p := self._place_of(prep, names))), '')
            if place and place != names[thing.i]:
                found.append(StateChange(names[thing.i], 'location', '', place))
        return found

    def _given(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"I gave Grandma her pills", "handed Tom the keys": with two objects, the thing goes to
        the person named first (with "to", "gave the pills to Grandma", the placement reads it)."""
        if tok.tag_ not in {'VBD', 'VBN'} or self._verb_lemma(tok) not in _GIVING:
            return []
        objects = [c for c in tok.children if c.dep_ in {'dative', 'dobj'}]
        if len(objects) < 2:
            return []
        # "gave me the remote": the one speaking has it (the robot, in its own report).
        me = objects[0].lower_ == 'me'
        if not me and not (is_person(objects[0]) and objects[0].i in names):
            return []
        to = (self.speaker or HELD) if me else names[objects[0].i]
        # ("gave me a hug" gives no thing: what is given to "me" is one the memory follows.)
        return [StateChange(names[t.i], 'location', '', to) for t in self._things(objects[1:], names)
                if not is_person(t) and not (me and indefinite(t))]

    def _went(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"The cat entered the kitchen", "Luna ran upstairs": the subject of a done act of
        going is where it went, and so is "Dad went to the shop" (with a preposition of where
        a thing rests, "went into the garden", the placement reads it)."""
        if tok.tag_ not in {'VBD', 'VBN'} or self._verb_lemma(tok) not in _GOING:
            return []
        # (Not a record's tag the parser took for a subject: "tracker: person_2 entered ...".)
        goers = self._things([c for c in tok.children if c.dep_ == 'nsubj'
                              and not (c.i + 1 < len(self.doc) and self.doc[c.i + 1].text == ':')], names)
        objects = [c for c in tok.children if c.dep_ == 'dobj' and c.i in names]
        goal = next((p for p in tok.children if p.dep_ == 'prep' and p.lower_ == 'to'), None)
        if objects and self._verb_lemma(tok) == 'enter':
            place = names[objects[0].i]
        elif goal is not None:
            place = self._place_of(goal, names)  # "Tom went to the kitchen"
        else:
            place = next((c.lower_ for c in tok.children if c.dep_ == 'advmod' and c.lower_ in DIRECTIONS
                          and not objects), '')
        return [StateChange(names[g.i], 'location', '', place) for g in goers
                if place and names[g.i] != place]

    def _gripped(self, prep: Token, word: str) -> str:
        """:data:`HELD` for a place in the robot's own hand ("the cup is in the gripper"), or the
        speaker's for "my hand" in what a person says; else ''."""
        hand = next((o for o in prep.children if o.dep_ == 'pobj' and self._is_self(o.lemma_.lower())), None)
        if word not in {'in', 'into'} or hand is None:
            return ''
        return self._hand_holder(hand)

    def _holding(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"Ethan holding a bottle of wine", "Mia is carrying the laundry basket", "a little girl
        hugging a teddy bear", "a child pointing a remote control at a television" (not at the
        television): a person who holds or carries a thing has it, wherever the two are.
        So does who speaks of what "I have" ("Zoe: I've got the tablet now")."""
        lemma, mine = self._verb_lemma(tok), self._said_by_speaker(tok)
        # "I've got the tablet", "Maria has the car keys" (not "had": when it went on is unsaid).
        got = tok.tag_ == 'VBN' and any(c.dep_ == 'aux' and c.lemma_.lower() == 'have' for c in tok.children)
        having = (lemma == 'have' and tok.tag_ in {'VBP', 'VBZ'}) or (lemma == 'get' and got)
        # "Leo took the umbrella": whoever took it has it, unless it went somewhere (below).
        took = lemma in _TOOK and tok.tag_ in {'VBD', 'VBN'}
        holding = lemma in _HOLDING and tok.tag_ in {'VBG', 'VBZ', 'VBP', 'VBD'}
        # "Lina put her glasses on", "put on her coat": worn (an appliance put on is switched on).
        wearing = lemma == 'put' and tok.tag_ in {'VBD', 'VBN'} and any(
            c.lower_ == 'on' and (c.dep_ == 'prt' or (c.dep_ == 'prep' and (
                c.i == tok.i + 1 or not list(c.children)))) for c in tok.children)
        if not (having or took or holding or wearing) or self.depicted(tok):
            return []  # (nor what a picture shows: "a poster of a woman wearing sunglasses")
        # The subject, or the name a participle is hung on in a caption ("Priya carrying ...").
        holders = [c for c in tok.children if c.dep_ == 'nsubj'] + ([tok.head] if tok.dep_ == 'acl' else [])
        if tok.dep_ == 'advcl' and tok.head.dep_ == 'acl':
            holders.append(tok.head.head)  # "a boy riding a bicycle, wearing a helmet"
        # "a girl hugging a teddy", "the dog has the ball"
        people = [names[c.i] for c in holders if c.i in names and (
            is_person(c) or NOUN_TYPES.get(c.lemma_.lower()) == 'animal')]
        people += [self.speaker] if mine else []
        # Not a second "object" after a phrase of the verb's ("carrying a box up a staircase",
        # which the parser may read as a second object).
        phrase = min((c.i for c in tok.children if c.dep_ == 'prep' or (c.dep_ == 'prt' and not took)),
                     default=len(self.doc))
        if any(c.dep_ == 'prep' and c.lower_ in _GOAL_PREPS and self._place_of(c, names)
               for c in (self._clause(tok) if took else tok.children)):
            # "a person carrying a laptop into the office", "Noor took the tablet up to her room":
            # the office, where it is going.
            return []
        objects = [c for c in tok.children if c.dep_ == 'dobj' and c.i < phrase]
        if wearing:
            objects += [o for c in tok.children if c.dep_ == 'prep' and c.lower_ == 'on' and c.i == tok.i + 1
                        for o in c.children if o.dep_ == 'pobj']
        things = [t for t in self._things(objects, names)
                  if not (having and t.lower_ in self.states)  # "Tom has a cold" has no thing
                  and not (wearing and NOUN_TYPES.get(t.lemma_.lower()) == 'appliance')]
        return [StateChange(names[t.i], 'location', '', people[0]) for t in things] if people else []

    def _closed_on(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"Gripper closed on the bottle", "the hand clamped around the cup": what the robot's own
        hand closes on or around, it holds (a person's hand closing is no log of the robot's)."""
        hand = next((c for c in tok.children if c.dep_ == 'nsubj' and self._is_self(c.lemma_.lower())), None)
        if self._verb_lemma(tok) not in _CLOSING or tok.tag_ not in {'VBD', 'VBN'} or hand is None:
            return []
        objects = [o for p in tok.children if p.dep_ == 'prep' and p.lower_ in {'on', 'around'}
                   for o in p.children if o.dep_ == 'pobj']
        return [StateChange(names[t.i], 'location', '', self._hand_holder(hand))
                for t in self._things(objects, names)]

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

