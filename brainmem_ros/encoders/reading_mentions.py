"""Which thing a word of a clause stands for: pronouns, quantities, lists, questions.

The state readings (:mod:`brainmem_ros.encoders.reading_states`) ask who or what a
verb's subject or object is. The parse says which word, not always which thing: "it"
and "them" stand for a thing named before ("switched it off", "put them in the fridge"),
"a pile of towels" is towels, "the eggs and the butter" are two things, and a question
("Is the back door locked?") states nothing at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import NOUN_TYPES
from brainmem_ros.encoders.reading_base import PLACE_PREPS, a_place, an_activity, is_person
from brainmem_ros.encoders.reading_outcome import OutcomeReading

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

#: Pronouns that stand for things (not people: "he", "she" are never placed or switched).
THING_PRONOUNS = {'it': False, 'them': True, 'they': True, 'these': True, 'those': True}
_REFLEXIVES = frozenset({'itself', 'themselves'})
# Nouns that count or group a thing ("a pile of towels", "a pair of scissors"): the thing
# is what they count. A closed class of English.
QUANTITIES = frozenset({'pile', 'stack', 'heap', 'bunch', 'pair', 'set', 'group', 'row', 'couple',
                        'handful', 'lot', 'number', 'bundle', 'collection', 'load', 'few',
                        # measures: "two litres of milk" is milk
                        'litre', 'liter', 'gallon', 'pint', 'kilo', 'kilogram', 'gram', 'pound',
                        'ounce', 'dozen', 'piece', 'slice'})
# Dependencies of a word that names the clause's participants, where an antecedent is sought
# (and the object of a preposition that names no place: "asked for his newspaper").
_ARGUMENTS = frozenset({'nsubj', 'nsubjpass', 'dobj', 'obj', 'appos', 'attr', 'pobj'})
# Prepositions of where a verb of motion went ("walked over to the lamp").
_TOWARDS = frozenset({'to', 'towards', 'toward', 'up to'})
# Verbs of shutting what a thing was put into ("put the milk in the fridge and closed it").
_SHUTTING = frozenset({'close', 'shut', 'lock', 'latch'})
# Prepositions of places and sources: what they name is where, not what ("put it on the table").
_PLACES = PLACE_PREPS | {'from', 'of', 'out', 'off', 'through', 'across', 'along', 'around'}


class MentionReading(OutcomeReading):
    """Things behind the words of a parse (a layer of a parse reading)."""

    _questions: set[int] | None = None
    _yes_no: frozenset[int] = frozenset()  # starts of the sentences that ask yes or no

    def _asked(self, tok: Token) -> bool:
        """``tok`` is in a clause that asks ("Is the back door locked?", "where is the remote?"),
        which states no change; in "The printer is jammed again, can you tell facilities?" only
        the second clause asks."""
        if self._questions is None:
            asking = [s for s in self.doc.sents if s.text.rstrip().endswith('?')]
            self._questions = {t.i for s in asking for t in s}
            tag = self.speaker_colon()
            # "Is the washing machine running?", "Ben: Is the back door locked?": a question from
            # its first word on (after the speaker's name), however the parser hung its words.
            openings = {s.start: self.doc[tag + 1] if tag and s.start <= tag < s.end and tag + 1 < s.end
                        else _after_vocative(s) for s in asking}
            self._yes_no = frozenset(start for start, first in openings.items() if first.pos_ == 'AUX')
        if tok.i not in self._questions:
            return False
        if tok.sent.start in self._yes_no:
            return True
        verb = tok
        while verb.pos_ not in {'VERB', 'AUX'} and verb.head.i != verb.i:
            verb = verb.head
        # "Is the stove hot?", "Is the back door locked?": the clause is the linking verb and
        # its complement, whichever of the two the parser hung the subject on.
        clause = [verb, verb.head] if verb.dep_ in {'acomp', 'attr'} else [verb]
        # (Not the speaker's name, which the parser may take for a subject: "Ben: Is the door locked?".)
        subjects = [c.i for v in clause for c in v.children if c.dep_ in {'nsubj', 'nsubjpass', 'expl'}
                    and c.i > self.speaker_colon()]
        helpers = [c.i for v in clause for c in v.children if c.dep_ in {'aux', 'auxpass'}]
        helpers += [v.i for v in clause if v.pos_ == 'AUX']
        inverted = bool(subjects) and bool(helpers) and min(helpers) < min(subjects)
        asks = any(t.tag_ in {'WRB', 'WP', 'WDT'} for v in clause for t in v.subtree if t.i <= v.i)
        return inverted or asks

    def _things(self, toks: list[Token], names: dict[int, str]) -> list[Token]:
        """The named things ``toks`` stand for: a pronoun's antecedent, what a quantity
        counts, and the things listed with each ("the eggs and the butter")."""
        out: list[Token] = []
        for word in toks:
            clause = word.head
            # "a dog that is lying on the floor": the dog (not "the box that was in the hall",
            # which says where it had been).
            relative = word.lower_ in {'that', 'which'} and clause.dep_ == 'relcl' and not any(
                t.tag_ == 'VBD' for t in (clause, *clause.children))
            tok = self._counted(clause.head if relative else word, names)
            if tok.lower_ in THING_PRONOUNS:
                out += self._antecedent(tok, names)
            elif tok.lower_ in _REFLEXIVES and tok.dep_ in {'dobj', 'obj'}:
                # "The kettle has boiled and switched itself off": its clause's subject.
                verb = tok.head.head if tok.head.dep_ == 'conj' and not any(
                    c.dep_ == 'nsubj' for c in tok.head.children) else tok.head
                out += self._things([c for c in verb.children if c.dep_ == 'nsubj'], names)
            elif tok.i in names:
                out.append(tok)
                out += [c for c in tok.conjuncts if c.i in names and c.i > tok.i]
        return list(dict.fromkeys(out))

    def _counted(self, tok: Token, names: dict[int, str]) -> Token:
        """"a pile of folded towels" -> towels."""
        if tok.lemma_.lower() not in QUANTITIES:
            return tok
        of = next((c for c in tok.children if c.dep_ == 'prep' and c.lower_ == 'of'), None)
        counted = next((g for g in of.children if g.dep_ == 'pobj' and g.i in names), None) if of else None
        return counted if counted is not None else tok

    def _antecedent(self, pronoun: Token, names: dict[int, str]) -> list[Token]:
        """The thing(s) ``pronoun`` stands for, when the number agrees: the first verb's object
        for the object of a verb joined to it ("picked up the toy car and put it in the box"),
        else the nearest thing named before it as a subject or an object ("the balcony door
        was open, so I closed it"; "searched the bedroom and found them" finds no bedroom)."""
        plural = THING_PRONOUNS[pronoun.lower_]
        verb = pronoun.head
        shut = self._shut_after_putting(pronoun, names)
        if shut:
            return shut if self._agrees(shut, plural) else []
        if pronoun.dep_ in {'dobj', 'obj'} and verb.dep_ == 'conj':
            first = [c for c in verb.head.children if c.dep_ in {'dobj', 'obj'} and c.i < pronoun.i
                     and not an_activity(c)]
            if not first:
                # "went over to the lamp and switched it off": the first verb has no thing of its
                # own, and what it went to is what the second acts on (a room is where it went:
                # "went to the kitchen and put it on the table" is about something else). Nor has
                # one whose object is an activity: "began the round at the back door and locked it".
                towards = _TOWARDS | ({'at'} if any(an_activity(c) for c in verb.head.children) else set())
                first = [o for p in verb.head.children if p.dep_ == 'prep' and p.lower_ in towards
                         for o in p.children if o.dep_ == 'pobj' and o.i in names
                         and not a_place(o, names)]
            if first:
                things = self._things(first, names)
                return things if self._agrees(things, plural) else []
        for prev in reversed(self.doc[:pronoun.i]):
            if prev.i in names and prev.dep_ in _ARGUMENTS \
                    and (prev.pos_ != 'PROPN' or NOUN_TYPES.get(prev.lower_) not in (None, 'person')) \
                    and not (prev.dep_ == 'pobj' and prev.head.lower_ in _PLACES) \
                    and not (prev.dep_ == 'dobj' and prev.head.pos_ == 'ADJ') and not an_activity(prev) \
                    and not self._purpose(prev):
                # (An adjective has no object: "open a crack" says how far, and "I slid it shut"
                # is about the door that was open.)
                # (A name is a person's, not a thing's: "Mr Okafor asked for his newspaper, so I
                # fetched it"; unless the tagger took a household noun for one: "Don't touch the
                # oven, it's still hot".)
                things = self._things([self.doc[self.heads.get(prev.i, prev.i)]], names)
                if self._agrees(things, plural):
                    return things
        return []

    def _shut_after_putting(self, pronoun: Token, names: dict[int, str]) -> list[Token]:
        """"put the milk in the fridge and closed it", "placed the bowl in the dishwasher, then
        closed it": what a thing was just put into is what is shut, when it is a piece of
        furniture or an appliance (not the milk, nor the bowl)."""
        verb = pronoun.head
        if pronoun.dep_ not in {'dobj', 'obj'} or self._verb_lemma(verb) not in _SHUTTING:
            return []
        before = verb.head if verb.dep_ == 'conj' else next(
            (c for c in verb.children if c.dep_ == 'advcl' and c.i < verb.i), None)
        if before is None:
            return []
        inside = [o for p in before.children if p.dep_ == 'prep' and p.lower_ in {'in', 'into'}
                  for o in p.children if o.dep_ == 'pobj' and o.i in names
                  and NOUN_TYPES.get(o.lemma_.lower()) in {'furniture', 'appliance'}]
        return self._things(inside, names)

    @staticmethod
    def _purpose(tok: Token) -> bool:
        """``tok`` says what an act on another thing was for ("opened the window for some air,
        but it was stuck": the window is stuck); what is asked "for" is the act's thing."""
        prep = tok.head
        if tok.dep_ != 'pobj' or prep.lower_ != 'for':
            return False
        act = prep.head
        return act.pos_ in {'NOUN', 'PROPN'} or any(c.dep_ in {'dobj', 'obj'} for c in act.children)

    @staticmethod
    def _agrees(things: list[Token], plural: bool) -> bool:
        """"it" is one thing in the singular, "them" several or a plural."""
        if not things:
            return False
        return plural == (len(things) > 1 or things[0].tag_ in {'NNS', 'NNPS'})


def _after_vocative(sent: Span) -> Token:
    """The first word of ``sent`` after whom it addresses ("Hey Google, is the front door
    locked?", "Alexa, is ..."): a greeting or names before a comma near its start."""
    comma = next((t.i for t in sent[:4] if t.text == ','), None)
    if comma is None or comma + 1 >= sent.end:
        return sent[0]
    called = sent.doc[sent.start:comma]
    if not all(t.pos_ in {'INTJ', 'PROPN'} or t.tag_ == 'UH' or is_person(t) for t in called):
        return sent[0]
    return sent.doc[comma + 1]
