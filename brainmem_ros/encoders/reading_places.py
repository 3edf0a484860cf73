"""Where a parse puts things (a layer of a parse reading, under the state layer of
:mod:`~brainmem_ros.encoders.reading_states`, over the holding layer of
:mod:`~brainmem_ros.encoders.reading_holding`).

"moved X from A to B", "X is on Y", "hung X on Y", "X is leaning against Y": X's location
from A to B. "took X from A" with no destination: X was at A and is now held. Which thing a
pronoun stands for is the mention layer's.
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
    is_person,
    narrated,
    place_preps,
    settling,
    what_for,
)
from brainmem_ros.encoders.reading_holding import GOAL_PREPS, GOING, TAKING_GRIP, TOOK, HoldingReading
from brainmem_ros.encoders.reading_measures import LEFT_DOING
from brainmem_ros.encoders.reading_scenes import HANGING, SCENE_PREPS
from brainmem_ros.memory.types import StateChange

if TYPE_CHECKING:
    from spacy.tokens import Token

# Words of a time to come: "I'm opening it later" is a plan.
_LATER = frozenset({'later', 'tomorrow', 'tonight', 'soon', 'afterwards', 'next', 'after'})
# Words before "on" that say what a thing lacks, not where it is ("low on ink").
_SUPPLY = frozenset({'low', 'short'})
# Verbs that say how a thing is, as "be" does ("the plant looks dry").
_LINKING = frozenset({'look', 'seem', 'appear', 'feel', 'smell', 'taste', 'sound', 'remain', 'stay'})
# Verbs of shifting a thing along, which leave it where it stops, not in hand ("moved the chair
# away from the window").
_SHIFTING = frozenset({'move', 'push', 'slide', 'drag', 'shift', 'roll', 'kick', 'nudge', 'shove'})
# Verbs whose "into" is where the contents went ("emptied the bin into the wheelie bin").
_EMPTYING = frozenset({'empty', 'drain'})


class PlaceReading(HoldingReading):
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
        taken = narrated(tok) and self._verb_lemma(tok) in TOOK  # "C picks a cup from the table"
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
        going = done and self._verb_lemma(tok) in GOING
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
        goal = next((p for p in preps if transitive and p.lower_ in GOAL_PREPS and not what_for(p, preps)
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
        gripping = taken or (self._doing(tok) and self._verb_lemma(tok) in TAKING_GRIP)  # "I'm borrowing it"
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
                elif child.dep_ == 'prep' and child.lower_ in GOAL_PREPS and thing.i in names:
                    goals.append(child)
                elif child.dep_ == 'prep':
                    things += [o for o in child.children if o.dep_ == 'pobj']
                elif child.i in names and names[child.i] == names.get(thing.i):
                    things.append(child)  # another word of the same name ("the kitchen counter")
        return goals

