"""Who has a thing: holding, taking, giving and going (a layer of a parse reading, under the
placements of :mod:`~brainmem_ros.encoders.reading_places`).

"Ethan holding a bottle": with Ethan. "handed Tom the keys": with Tom. "Leo took the umbrella":
Leo has it. "the gripper closed on the bottle": the robot holds it. "Dad went to the shop": Dad
is there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import NOUN_TYPES
from brainmem_ros.encoders.reading_base import DIRECTIONS, HELD, indefinite, is_person
from brainmem_ros.encoders.reading_measures import MeasureReading
from brainmem_ros.memory.types import StateChange

if TYPE_CHECKING:
    from spacy.tokens import Token

# Prepositions of a goal ("to the sink"), as opposed to those of a resting place ("in the kitchen").
GOAL_PREPS = frozenset({'to', 'into', 'onto'})
# Verbs of taking a thing with a particle ("took out", "picked up", "lifted down") and of
# gripping it: the thing is held afterwards.
_TAKING = frozenset({'take', 'pick', 'lift', 'get', 'fetch'})
TAKING_GRIP = frozenset({'grab', 'grasp', 'grip', 'borrow'})
_HOLDING = frozenset({'hold', 'carry', 'hug', 'clutch', 'cradle', 'cuddle', 'wear', 'point', 'aim'})
# Verbs of taking after which a person named as the subject has the thing (not "got", "fetched"
# for someone, or "gripped").
TOOK = (_TAKING | TAKING_GRIP) - {'get', 'fetch', 'grip'}
# Verbs of giving a thing to someone ("gave Grandma her pills").
_GIVING = frozenset({'give', 'hand', 'pass', 'bring', 'lend', 'send', 'throw', 'toss', 'offer', 'return',
                     'fetch'})
# Verbs of going somewhere ("entered the kitchen", "ran upstairs").
GOING = frozenset({'enter', 'go', 'come', 'run', 'walk', 'head', 'move', 'wander', 'climb', 'hurry', 'rush',
                    'return', 'step'})
# What a robot's hand does when it grips a thing ("the gripper closed on the bottle").
_CLOSING = frozenset({'close', 'clamp', 'tighten'})


class HoldingReading(MeasureReading):
    """Who holds or takes a thing, and where a person went (a layer of a parse reading)."""

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
        if tok.tag_ not in {'VBD', 'VBN'} or self._verb_lemma(tok) not in GOING:
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
        # "Irina: Got the keycard from the robot": a spoken report that leaves out its "I".
        # (The parser may make the speaker's name its subject, and tag the past a base form.)
        if self.speaker and tok.i and self.doc[tok.i - 1].text == ':' \
                and (tok.tag_ == 'VBD' or (tok.tag_ == 'VB' and self._inflected(tok))) \
                and not any(c.dep_ in {'nsubj', 'nsubjpass', 'expl'} and c.i > tok.i for c in tok.children):
            mine, got = True, got or lemma == 'get'
        having = (lemma == 'have' and tok.tag_ in {'VBP', 'VBZ'}) or (lemma == 'get' and got)
        # "Leo took the umbrella": whoever took it has it, unless it went somewhere (below).
        took = lemma in TOOK and tok.tag_ in {'VBD', 'VBN'}
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
        if not holders and tok.dep_ == 'conj' and tok.head.pos_ == 'VERB':
            # "Mrs. Sato recognised the scarf and took it with her": the first verb's subject.
            holders = [c for c in tok.head.children if c.dep_ == 'nsubj']
        # "a girl hugging a teddy", "the dog has the ball"
        people = [names[c.i] for c in holders if c.i in names and (
            is_person(c) or NOUN_TYPES.get(c.lemma_.lower()) == 'animal')]
        people += [self.speaker] if mine else []
        # "The robot is carrying the folder", "I'm holding the cup": its own report of what it holds
        # now (what it took or carried is where the act put it: the placement layer's).
        # ("robot" is one of the robot's own words, as "gripper" is.)
        if not people and not self.speaker and tok.tag_ in {'VBG', 'VBZ', 'VBP'} \
                and any(c.lower_ == 'i' or self._is_self(c.lemma_.lower()) for c in holders):
            people = [HELD]
        # Not a second "object" after a phrase of the verb's ("carrying a box up a staircase",
        # which the parser may read as a second object).
        phrase = min((c.i for c in tok.children if c.dep_ == 'prep' or (c.dep_ == 'prt' and not took)),
                     default=len(self.doc))
        if any(c.dep_ == 'prep' and c.lower_ in GOAL_PREPS and self._place_of(c, names)
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
        return lemma in TAKING_GRIP or (lemma in _TAKING and bool(particle & {'out', 'up', 'down'}))

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
