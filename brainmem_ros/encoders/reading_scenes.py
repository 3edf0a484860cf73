"""Where a scene puts things: what a caption says without a verb of its own.

An image captioner names what it sees as a noun phrase ("a green backpack lying on the
hallway floor near the front door", "a hardcover book on a nightstand", "an open
dishwasher with the lower rack full"): no verb reports an act, yet each says where a
thing was, or what state it was in, when the image was taken. The state layer
(:mod:`~brainmem_ros.encoders.reading_states`) reads acts and copulas; this layer reads
the scene:

- a thing with a participle of posture or placement and no object of its own hung on
  it ("backpack lying on the floor", "keys left in the car") is where the participle's
  first resting phrase says, in any sentence ("I saw the backpack lying on the floor");
- an utterance whose root is a thing (a caption) puts that thing, or what its quantity
  counts ("a set of car keys"), where its first resting phrase says, and gives it the
  state an adjective before it names ("an open dishwasher"). In a sentence with a verb,
  "the open door" only names the door (the verb says what happened: "I closed the open
  door"), except after a verb of seeing that is done ("I saw the full pitcher on the
  table"): seeing changes nothing, so what was seen is as it is named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import COMPARTMENTS, NOUN_TYPES
from brainmem_ros.encoders.reading_base import (
    POWER,
    RESTING_PREPS,
    a_place,
    a_time,
    determined,
    has_object,
    is_person,
)
from brainmem_ros.encoders.reading_entities import WRITTEN
from brainmem_ros.encoders.reading_mentions import MentionReading
from brainmem_ros.memory.types import StateChange

if TYPE_CHECKING:
    from spacy.tokens import Token

_PARTICIPLES = frozenset({'VBG', 'VBN'})
#: Verbs of a thing hanging, whose "from" says where it is ("a towel hanging from the rail").
HANGING = frozenset({'hang', 'dangle', 'suspend'})
# Verbs of a thing laid across another, whose "over" says where it rests ("a jacket draped over
# a chair"); after other verbs "over" is a way across ("a cat jumping over the fence").
DRAPED = frozenset({'drape', 'sling', 'hang', 'throw', 'toss', 'fold', 'spread', 'lay'})
#: Where a scene's thing rests: not where it goes ("the faucet running into a pot").
SCENE_PREPS = RESTING_PREPS - {'into', 'onto'}
_UNSEEN = frozenset({'missing', 'lost'})
# A room's own surfaces: where in which room a thing leans or lies says more with the room.
_SURFACES = frozenset({'wall', 'floor', 'ceiling'})
# Nouns of a part or position of a thing: "the middle of the table" is on the table.
_PARTS = frozenset({'middle', 'edge', 'top', 'bottom', 'side', 'corner', 'end', 'foot', 'front', 'back',
                    'center', 'centre', 'rim', 'surface', 'base', 'far', 'near'})
# Verbs of seeing: their object is as the words before it describe it, then.
_SEEING = frozenset({'see', 'notice', 'spot', 'find', 'observe', 'detect', 'discover', 'glimpse', 'sight'})
# Verbs of a thing left standing somewhere, whose "at" says where ("a van parked at the dock"),
# unlike one of looking or pointing ("a man looking at the door").
_STATIONED = frozenset({'park', 'station', 'dock', 'leave', 'stand', 'sit', 'lie', 'rest', 'stop'})
# Things that show other things: what a poster or a photo is "of" is not there.
_DEPICTIONS = frozenset({'poster', 'picture', 'photo', 'photograph', 'painting', 'drawing', 'image', 'print',
                         'portrait', 'sketch', 'illustration', 'screenshot', 'reflection'})


class SceneReading(MentionReading):
    """The places and states a scene shows (a layer of a parse reading)."""

    def _scene(self, names: dict[int, str]) -> list[StateChange]:
        found: list[StateChange] = []
        for tok in self.doc:
            if tok.dep_ == 'acl' and tok.tag_ in _PARTICIPLES and tok.head.i in names \
                    and not has_object(tok) and not self._negated(tok) and not self._asked(tok) \
                    and not self.depicted(tok):
                shown = self._things([self._first_listed(tok.head)], names)
                placed = self._resting(shown, [tok], names)
                # "a folded wheelchair leaning against the wall": as the words before it say, too.
                found += placed + (self._described(shown, names) if placed else [])
        for sent in self.doc.sents:
            root = sent.root
            if root.tag_ in _PARTICIPLES and not any(c.dep_ in {'aux', 'auxpass'} for c in root.children):
                # "a closed umbrella hanging from a hook": the participle's subject is the scene's
                # thing (the state layer places it).
                root = next((c for c in root.children if c.dep_ == 'nsubj'), root)
                if root.i not in names:
                    continue
                things = self._things([root], names)
            elif any(c.dep_ == 'expl' for c in root.children):
                if not self._asked(root) and not self._negated(root):
                    found += self._there_with(root, names)
                continue
            elif root.pos_ not in {'NOUN', 'PROPN'} or root.i not in names or self._asked(root) \
                    or any(c.dep_ == 'det' and c.lower_ == 'no' for c in root.children) \
                    or self.depicted(root):
                if root.pos_ in {'NOUN', 'PROPN'} and not self._asked(root) and not self.depicted(root):
                    found += self._scene_items(root, names)  # "a dark screen, a remote on the table"
                continue  # a sentence with a verb of its own, or "no cars on the street"
            else:
                things = self._things([root], names)
                # (Or on an adjective after it: "a toolbox open on a garage floor".)
                later = [a for a in root.children if a.dep_ == 'amod' and a.i > root.i]
                # "seed trays of seedlings on a trolley": where the contents are, their container is.
                # (Not what a picture is of: "a painting of a sailboat on the wall" is the sailboat's.)
                held = [o for p in root.children if p.dep_ == 'prep' and p.lower_ == 'of'
                        and root.lemma_.lower() not in _DEPICTIONS for o in p.children if o.dep_ == 'pobj']
                found += self._resting(things, [root, *things, *later], names) \
                    or self._resting(things, held, names)
                found += self._scene_items(root, names)
            found += self._described(things, names)
        seen = [t for t in self.doc if t.dep_ == 'dobj' and t.i in names and self._seen(t.head)]
        # A thing seen or found is missing no more ("I found the missing sock behind the washer").
        described = self._described(self._things(seen, names), names)
        return found + [c for c in described if c.after not in _UNSEEN]

    @staticmethod
    def _first_listed(tok: Token) -> Token:
        """The first of the things listed with ``tok``: a participle after the last of them
        tells of all ("a yellow umbrella and a black umbrella standing in the stand"), not of
        one with a participle of its own ("a car parked and tools hanging on the wall")."""
        while tok.dep_ == 'conj' and tok.head.pos_ in {'NOUN', 'PROPN'} \
                and not any(c.dep_ == 'acl' and c.i < tok.i for c in tok.head.children):
            tok = tok.head
        return tok

    def _there_with(self, verb: Token, names: dict[int, str]) -> list[StateChange]:
        """"There is a desk with a laptop and a lamp in the study": what the thing is with is at
        it, and a resting phrase after them is the thing's when it has none of its own (the
        parser hangs it on the last thing listed). The placement layer places the thing
        itself when the phrase is its own ("There was a bowl with fruit on the table")."""
        found: list[StateChange] = []
        for shown in (c for c in verb.children if c.dep_ == 'attr' and c.i in names
                      and not any(d.dep_ == 'det' and d.lower_ == 'no' for d in c.children)):
            for prep in (c for c in shown.children if c.dep_ == 'prep' and c.lower_ == 'with'):
                held = [h for h in self._things([o for o in prep.children if o.dep_ == 'pobj'], names)
                        if names[h.i] != names[shown.i]]
                own = any(c.dep_ == 'prep' and c.lower_ in SCENE_PREPS for c in shown.children)
                if is_person(shown):
                    # "a man with a dog in the garden": who is with a person is where they are.
                    found += [] if own else self._resting(self._things([shown], names) + held, held, names)
                    continue
                found += [StateChange(names[h.i], 'location', '', names[shown.i])
                          for h in held if not _a_part(h)]
                if held and not own:
                    found += self._resting(self._things([shown], names), held, names)
        return found

    def _scene_items(self, root: Token, names: dict[int, str]) -> list[StateChange]:
        """The other things a caption shows beside its first: a phrase after a comma ("..., a
        remote control on the coffee table"), where its own resting phrase says; what the
        thing is "with" ("a laundry basket with a blue towel"), there unless its own phrase
        says otherwise ("a bedroom with a backpack on the chair"). Each in the state the
        words before it name ("a bedroom with open curtains")."""
        found: list[StateChange] = []
        doc = self.doc
        # (Or before it, a comma after: "cup on the table, plate in the sink", its noun hung on
        # the root as whatever the parser guessed.)
        # (The parser may hang a listed phrase on any noun before it: "a television showing a
        # cooking show, a remote control on a sofa cushion" on "show", or on a participle as an
        # unknown relation: "a whiteboard switched off, a globe on the desk".)
        listed = [c for c in doc if c.i in names and (
            (c.dep_ in {'appos', 'dep'} and c.left_edge.i > 0 and doc[c.left_edge.i - 1].text == ',')
            or (c.head.i == root.i and c.dep_ in {'dep', 'advcl', 'npadvmod', 'nmod'} and c.pos_ == 'NOUN'
                and c.i < root.i and c.right_edge.i + 1 < root.i and doc[c.right_edge.i + 1].text == ','))]
        for item in listed:
            shown = self._things([item], names)
            found += self._resting(shown, [item], names) + self._described(shown, names)
        if root.lemma_.lower() in _DEPICTIONS or root.i not in names:
            return found  # "an image of a hallway with light ...": not in it
        for owner, prep in self._with_phrases(root, names):
            # "with a wet umbrella leaning against the wall": the parser may make the participle
            # the preposition's and the thing its subject.
            verbs = [c for c in prep.children if c.dep_ == 'pcomp' and c.tag_ in _PARTICIPLES]
            said = [o for o in prep.children if o.dep_ == 'pobj'] + [
                s for v in verbs for s in v.children if s.dep_ == 'nsubj']
            if owner is root and a_place(root, names):
                # "a bathroom with a toilet and a sink": the parser joins the sink to the room;
                # what a room is shown with is in it (a thing, not another room).
                said += [c for c in root.children
                         if c.dep_ == 'conj' and c.i > prep.i and not a_place(c, names)]
            held = [h for h in self._things(said, names) if names[h.i] != names[owner.i]]
            # Each where its own phrase or participle says ("a kettle on the stove and a bowl on
            # the counter", "a red kettle sitting on the stove"), else in the scene's thing: "a
            # bed and a lamp on a nightstand" puts only the lamp there.
            for h in (h for h in held if not _a_part(h)):
                hangers = [h, *(c for c in h.children if c.dep_ == 'acl' and c.tag_ in _PARTICIPLES), *verbs]
                found += self._resting([h], hangers, names) or [
                    StateChange(names[h.i], 'location', '', names[owner.i])]
            found += self._described(held, names)
        return found

    @staticmethod
    def _with_phrases(root: Token, names: dict[int, str]) -> list[tuple[Token, Token]]:
        """(the thing, its "with" phrase) of a caption's thing, and of the place it is in or on,
        however the parser hung them: "a toolbox open on the floor with a hammer beside it" (on
        the adjective after the thing), "a laptop on a desk with a mug beside it" (on the place,
        whose thing the mug is then)."""
        after = [root, *(a for a in root.children if a.dep_ == 'amod' and a.i > root.i)]
        found = [(root, p) for t in after for p in t.children if p.dep_ == 'prep' and p.lower_ == 'with']
        places = [o for t in after for q in t.children if q.dep_ == 'prep' and q.lower_ in SCENE_PREPS
                  for o in q.children if o.dep_ == 'pobj' and o.i in names]
        # (The place's only when what it is with is placed by a pronoun, "beside it": "a plant on a
        # windowsill with the blinds half open" says how the blinds are, not where.)
        return found + [(o, p) for o in places for p in o.children if p.dep_ == 'prep' and p.lower_ == 'with'
                        and any(g.dep_ == 'pobj' and g.lower_ in {'it', 'them'}
                                for w in p.children for q in w.children for g in q.children)]

    def _described(self, things: list[Token], names: dict[int, str]) -> list[StateChange]:
        """The state an adjective before each of ``things`` names ("an open dishwasher"), or
        "on"/"off" right after it ("a sink with the faucet off")."""
        return [StateChange(names[thing.i], 'power' if a.lower_ in POWER else 'state', '', a.lower_)
                for thing in things for a in thing.children
                if (a.dep_ == 'amod' and a.i < thing.i and a.lower_ in self.states)
                or (a.dep_ in {'prt', 'advmod'} and a.i == thing.i + 1 and a.lower_ in POWER
                    and not list(a.children))]

    def _seen(self, verb: Token) -> bool:
        """``verb`` reports a done act of seeing ("saw", "have noticed"), not a plan or an order."""
        done = verb.tag_ == 'VBD' or (verb.tag_ == 'VBN' and any(
            c.dep_ == 'aux' and c.lemma_.lower() == 'have' for c in verb.children))
        return done and verb.lemma_.lower() in _SEEING and not self._negated(verb) and not self._asked(verb)

    def depicted(self, tok: Token) -> bool:
        """``tok`` is shown by a picture, not there: "a poster of a woman wearing sunglasses"."""
        while tok.head.i != tok.i:
            if tok.dep_ == 'pobj' and tok.head.lower_ == 'of' and tok.head.head.lemma_.lower() in _DEPICTIONS:
                return True
            tok = tok.head
        return False

    def _resting(self, things: list[Token], hangers: list[Token], names: dict[int, str]) -> list[StateChange]:
        """``things`` are where the first resting phrase hung on one of ``hangers`` says (what a
        thing hangs "from" or is draped "over" is where it is)."""
        preps = sorted({c for h in hangers for c in h.children if c.dep_ == 'prep' and (
            c.lower_ in SCENE_PREPS or (c.lower_ == 'from' and h.lemma_.lower() in HANGING)
            or (c.lower_ == 'at' and h.lemma_.lower() in _SEEING)  # "keys last seen at the hallway table"
            or (c.lower_ == 'at' and h.lemma_.lower() in _STATIONED)  # "a wheelchair parked at the bed"
            or (c.lower_ == 'over' and h.lemma_.lower() in DRAPED))},
            key=lambda p: p.i)
        movers = {names[t.i] for t in things}
        for prep in preps:
            place = self._place_of(prep, names)
            if place and place not in movers:
                return [StateChange(name, 'location', '', place) for name in movers]
        return []

    def _place_of(self, prep: Token, names: dict[int, str]) -> str:
        """The thing a preposition names: its object, or what that object is part of
        ("in front of the sofa", "on top of the fridge")."""
        for obj in prep.children:
            if obj.dep_ != 'pobj' or a_time(obj) or obj.lemma_.lower() in WRITTEN:
                continue  # (nor a time: "arrived on Monday", "at noon"; nor "to the shopping list")
            bare = not determined(obj) or obj.lemma_.lower() in _PARTS
            surface = obj.lemma_.lower() in _SURFACES
            if obj.i in names and (surface or obj.lemma_.lower() in COMPARTMENTS):
                # "in the drawer of my nightstand": the nightstand drawer, a place of its own;
                # "against a wall in the garage", "on the floor of the kitchen": the garage wall.
                preps = {'in', 'of'} if surface else {'of'}
                owner = next((g for c in obj.children if c.dep_ == 'prep' and c.lower_ in preps
                              for g in c.children if g.dep_ == 'pobj' and g.i in names
                              and (not surface or NOUN_TYPES.get(names[g.i].split()[-1]) == 'place')), None)
                if owner is not None and names[owner.i] != names[obj.i]:
                    return f'{names[owner.i]} {names[obj.i]}'
            if obj.i in names and not (bare and any(c.lower_ == 'of' for c in obj.children)):
                return names[obj.i]
            if obj.i not in names:
                # "on the back porch step": a noun that names nothing by itself (a stop word:
                # "step", "side") is a part of the thing its modifier names.
                part_of = next((c for c in obj.children if c.dep_ == 'compound' and c.i in names), None)
                if part_of is not None:
                    return names[part_of.i]
            for inner in obj.children:  # a bare noun with "of" makes a preposition
                if inner.dep_ == 'prep' and inner.lower_ == 'of':
                    got = next((g for g in inner.children if g.dep_ == 'pobj' and g.i in names), None)
                    if got is not None:
                        return names[got.i]
            if obj.i not in names:
                # "in the background on the counter": a word that names no place, and a place after it.
                return next((p for inner in obj.children if inner.dep_ == 'prep'
                             and inner.lower_ in SCENE_PREPS and (p := self._place_of(inner, names))), '')
        return ''


def _a_part(tok: Token) -> bool:
    """"a refrigerator with its door open": a part of the thing, not a thing kept at it."""
    return any(c.dep_ == 'poss' and c.lower_ == 'its' for c in tok.children)
