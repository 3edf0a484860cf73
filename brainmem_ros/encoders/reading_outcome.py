"""The outcome a parse reports: success and failure cues, negation, ability, arrival.

A cue counts by what its clause says of it (:class:`Reality`): a failure cue only when
it happened ("dropped it", not "did not drop it", "nothing was spilled", "careful not to
spill", "might fall"); a success cue or an arrival is a success when it happened and a
failure when the text says it did not ("could not reach the book", "failed to complete",
"too dull to cut").
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import (
    Cue,
    outcome_cues,
)
from brainmem_ros.encoders.reading_base import (
    ABILITY,
    ARRIVALS,
    NEARLY,
    NOMINAL,
    NOT_HAPPENED,
    conditional,
    imperative,
)
from brainmem_ros.encoders.reading_entities import EntityReading
from brainmem_ros.encoders.verb_forms import verb_base
from brainmem_ros.memory.types import Outcome

if TYPE_CHECKING:
    from spacy.tokens import Token

# A subject or object that is no thing at all takes the event away ("nothing was
# spilled", "no one was hurt", "dropped nothing"); closed-class words, not vocabulary.
NEGATIVE_ARGUMENTS = frozenset({'nothing', 'nobody', 'none', 'noone', 'neither'})
NEGATIVE_DETERMINERS = frozenset({'no', 'neither'})
ARGUMENTS = frozenset({'nsubj', 'nsubjpass', 'dobj', 'obj'})
# Heads whose to-infinitive happened when they did ("managed to open", "was able to
# reach", "started to slip"); any other head makes it an aim, a request or a possibility
# ("tried to", "asked me to", "is about to", "stood on the chair to reach").
IMPLICATIVE = frozenset({'manage', 'able', 'start', 'begin', 'continue', 'keep', 'happen', 'seem',
                         'appear'})
# Heads whose complement did not happen ("failed to reach", "unable to dock", "avoided
# spilling").
COUNTERFACTIVE = frozenset({'fail', 'unable', 'avoid', 'prevent'})
# "not done yet": still under way, no failure.
UNDER_WAY = frozenset({'yet', 'still'})
# ("I almost dropped it": not dropped; "the bin is almost full": a state of its own.)
_NOT_HAPPENED_TO_STATES = NOT_HAPPENED - NEARLY


class Reality(Enum):
    """What a clause says of its event."""

    HAPPENED = 'happened'
    NOT_HAPPENED = 'not happened'  # negated, or an ability denied ("could not open")
    UNREAL = 'unreal'              # an aim, a request, a condition or a possibility


class OutcomeReading(EntityReading):
    """The outcome a parse reports (a layer of a parse reading)."""

    def outcome(self) -> tuple[Outcome, float | None]:
        """The outcome the parse reports and its valence (None: no cue)."""
        best: tuple[int, Outcome, float] | None = None
        for pos, outcome, valence in self._cues():
            if best is None or pos >= best[0]:
                best = (pos, outcome, valence)
        return (Outcome.UNKNOWN, None) if best is None else (best[1], best[2])

    def _cues(self) -> Iterable[tuple[int, Outcome, float]]:
        by_lemma: dict[str, list[Cue]] = {}
        for cue in outcome_cues():
            by_lemma.setdefault(cue.lemma, []).append(cue)
        tried = False
        for tok in self.doc:
            lemma, word = tok.lemma_.lower(), tok.lower_
            if self._postposed_participle(tok):
                lemma = verb_base(word, self.verbs, self.irregular)
            if lemma in {'try', 'attempt'} and tok.pos_ == 'VERB':
                tried = True
            if tried and word == 'but' and tok.dep_ == 'cc':
                yield tok.i, Outcome.FAILURE, -0.4  # "tried to X, but ..."
            for cue in by_lemma.get(lemma, []) + (by_lemma.get(word, []) if word != lemma else []):
                if cue.particle and not self._has_particle(tok, cue.particle):
                    continue
                if not cue.particle and any(c.lemma == lemma and c.particle
                                            and self._has_particle(tok, c.particle)
                                            for c in by_lemma.get(lemma, [])):
                    continue
                if cue.verb_only and tok.pos_ != 'VERB' and tok.tag_ != 'VBN':
                    continue
                found = self._cue_outcome(tok, cue)
                if found is not None:
                    yield tok.i, *found
            yield from self._clause_cues(tok, lemma)

    def _clause_cues(self, tok: Token, lemma: str) -> Iterable[tuple[int, Outcome, float]]:
        """Cues of the clause rather than of a word: arrival, a denied ability, "too X to Y"."""
        if lemma in {'reach', 'arrive'} and self._arrived(tok):
            reality = self._reality(tok)
            if reality is Reality.HAPPENED:
                yield tok.i, Outcome.SUCCESS, 0.4
            elif reality is Reality.NOT_HAPPENED and not self._failure_of_head(tok):
                yield tok.i, Outcome.FAILURE, -0.4  # "did not reach the goal"
        if (tok.pos_ in {'VERB', 'AUX'} and self._negated(tok) and not imperative(tok)
                and any(c.lower_ in ABILITY or c.lemma_.lower() in ABILITY for c in tok.children)):
            yield tok.i, Outcome.FAILURE, -0.5  # "could not open the jar", "can't open"
        if self._too_much(tok):
            yield tok.i, Outcome.FAILURE, -0.5  # "too dull to cut", "not strong enough to lift"

    def _cue_outcome(self, tok: Token, cue: Cue) -> tuple[Outcome, float] | None:
        """What ``cue`` at ``tok`` says, given what its clause says of it."""
        reality = self._reality(tok)
        if cue.only_negated:
            # "No person detected" reports an empty room, not a failed search.
            denied = reality is Reality.NOT_HAPPENED and not self._negative_argument(tok)
            return (cue.outcome, cue.valence) if denied and not self._failure_of_head(tok) else None
        if reality is Reality.UNREAL or (not cue.particle and not self._counts_as_cue(tok, cue)):
            return None
        if reality is Reality.HAPPENED:
            return cue.outcome, cue.valence
        if (cue.outcome is Outcome.SUCCESS and not self._failure_of_head(tok)
                and not any(c.lower_ in UNDER_WAY for c in tok.children)):
            return Outcome.FAILURE, -0.4  # "did not succeed", "could not complete the task"
        return None  # "did not drop it", "not done yet"

    def _failure_of_head(self, tok: Token) -> bool:
        """"failed to complete", "unable to reach": the head is the failure cue itself."""
        return tok.dep_ == 'xcomp' and tok.head.lemma_.lower() in {'fail', 'unable'}

    def _reality(self, tok: Token, depth: int = 0) -> Reality:
        """Whether the clause of ``tok`` says its event happened, did not, or only might."""
        if imperative(tok) or self._request(tok):
            return Reality.UNREAL  # "don't drop it", "please finish the dishes": a request
        if self._denied(tok):
            return Reality.NOT_HAPPENED
        head = tok.head
        clauses = [tok, head] if tok.dep_ in {'acomp', 'attr'} else [tok]  # "might be stuck"
        if any(conditional(c) or self._modal(c) for c in clauses):
            return Reality.UNREAL  # "before I arrive", "the cup might fall", "will reach"
        if depth < 4 and tok.dep_ == 'conj' and tok.tag_ == head.tag_ and not conditional(head) and not any(
                c.dep_ in {'nsubj', 'nsubjpass', 'aux', 'auxpass'} for c in tok.children):
            # "could not open or close it"; not "waited until he opened it and then completed
            # the inspection", where the parser puts the second verb under the condition.
            return self._reality(head, depth + 1)
        if head.lemma_.lower() in COUNTERFACTIVE and tok.dep_ in {'xcomp', 'dobj', 'pcomp'}:
            return Reality.NOT_HAPPENED  # "failed to reach", "unable to dock", "avoided a collision"
        if not self._infinitive(tok):
            return Reality.HAPPENED
        if self._degree(tok, head) == 'too':
            return Reality.NOT_HAPPENED  # "too dull to cut the bread"
        if depth < 4 and tok.dep_ == 'xcomp' and head.lemma_.lower() in IMPLICATIVE:
            return self._reality(head, depth + 1)  # "managed to", "was not able to"
        return Reality.UNREAL  # "stood on the chair to reach the book", "tried to open"

    def _denied(self, tok: Token) -> bool:
        """The clause of ``tok`` says no: a negation on it (on its linking verb for an
        adjective: "was not able", "did not get stuck") or a subject or object that is
        nothing ("nothing was spilled")."""
        if self._negated(tok) or self._negative_argument(tok):
            return True
        if any(c.dep_ in {'aux', 'auxpass'} and any(g.dep_ == 'neg' for g in c.children)
               for c in tok.children):
            return True  # "did not get stuck": the parser hangs "not" on the auxiliary
        if tok.dep_ in {'acomp', 'attr', 'advmod'} and self._negative_argument(tok.head):
            return True  # "No lights are on", "nothing is open"
        return tok.dep_ in {'acomp', 'attr', 'advmod'} and self._negated(tok.head)

    def _negative_argument(self, tok: Token) -> bool:
        """A subject or object of ``tok`` that is no thing: "nothing", "no cups", "not one glass"."""
        return any(c.dep_ in ARGUMENTS and (c.lower_ in NEGATIVE_ARGUMENTS or any(
            d.i < c.i and (d.dep_ == 'neg' or (d.dep_ == 'det' and d.lower_ in NEGATIVE_DETERMINERS))
            for d in c.subtree)) for c in tok.children)

    def _modal(self, tok: Token) -> bool:
        """A modal makes an event possible, wanted or future; "must have fallen" infers one."""
        modals = {c.lemma_.lower() for c in tok.children
                  if c.dep_ == 'aux' and c.tag_ == 'MD' and c.i not in self.as_noun}
        perfect = any(c.dep_ == 'aux' and c.lemma_.lower() == 'have' for c in tok.children)
        return bool(modals - {'must'} if perfect else modals)

    def _infinitive(self, tok: Token) -> bool:
        return any(c.dep_ == 'aux' and c.tag_ == 'TO' for c in tok.children)

    def _degree(self, verb: Token, head: Token) -> str:
        """'too' of "too dull to cut", 'enough' of "strong enough to lift": a degree word on
        the adjective or adverb ``head`` whose infinitive ``verb`` is ('' when there is none)."""
        for tok in head.subtree:
            if tok.i >= verb.i:
                break
            if (tok.lower_ not in {'too', 'enough'} or tok.dep_ != 'advmod'
                    or tok.head.pos_ not in {'ADJ', 'ADV'}):
                continue
            up = tok.head  # "too far away to reach": too -> far -> away -> was
            while up.i != head.i and up.pos_ in {'ADJ', 'ADV'} and up.head.i != up.i:
                up = up.head
            if up.i == head.i:
                return tok.lower_
        return ''

    def _too_much(self, verb: Token) -> bool:
        """"too heavy to lift", "not strong enough to lift": the infinitive did not happen."""
        if self._infinitive(verb) and verb.dep_ in {'xcomp', 'advcl'}:
            head = verb.head
        elif (verb.dep_ == 'pobj' and verb.head.lower_ == 'to' and verb.lower_ in self.verbs
              and verb.lower_ not in self.nouns and not any(c.dep_ == 'det' for c in verb.children)):
            head = verb.head.head  # "too tight to unscrew", the verb tagged as the object of "to"
        else:
            return False
        degree, reality = self._degree(verb, head), self._reality(head)
        return ((degree == 'too' and reality is Reality.HAPPENED)  # not "might be too heavy to lift"
                or (degree == 'enough' and reality is Reality.NOT_HAPPENED))

    def _has_particle(self, tok: Token, particle: str) -> bool:
        nxt = tok.nbor(1).lower_ if tok.i + 1 < len(self.doc) else ''
        return nxt == particle or any(c.dep_ == 'prt' and c.lower_ == particle for c in tok.children)

    def _negated(self, tok: Token) -> bool:
        unreal = _NOT_HAPPENED_TO_STATES if tok.pos_ == 'ADJ' else NOT_HAPPENED
        if any(c.dep_ == 'neg' or (c.lower_ in unreal and c.dep_ not in {'prep', 'intj'})
               for c in tok.children):
            # "completed it without any problem" negates the problem, not the act; "Oh no, my
            # keys were in the pocket!" and "No, it's in the car" answer or exclaim, not deny.
            return True
        if tok.head.lower_ in NOT_HAPPENED:
            return True  # "without dropping it"
        if any(c.lower_ == 'longer' and any(g.dep_ == 'neg' for g in c.children) for c in tok.children):
            return True  # "the umbrella is no longer by the door"
        prev = tok.nbor(-1).lower_ if tok.i > 0 else ''
        return prev in {'not', "n't", 'never'} | unreal or _denied_after(tok)

    def _counts_as_cue(self, tok: Token, cue: Cue) -> bool:
        if tok.dep_ == 'amod' and tok.tag_ != 'VBN':
            # "the missing toolbox" names a thing; "that is the wrong cup" judges it.
            return tok.head.dep_ in {'attr', 'ROOT'}
        return True

    def _arrived(self, tok: Token) -> bool:
        if tok.pos_ != 'VERB' or conditional(tok):
            return False  # "before the guests arrive": not an arrival that happened
        if (tok.lemma_.lower() == 'arrive' or any(c.dep_ == 'dobj' for c in tok.children)) and any(
                c.dep_ == 'nsubj' and c.pos_ in NOMINAL and not self._is_other_self(c.lower_, c.i, c.i)
                for c in tok.children):
            return False  # someone else arrived ("the guests arrive"); "goal reached" is ours
        places = [c for c in tok.children if c.dep_ in {'dobj', 'nsubj', 'nsubjpass'}]
        places += [g for c in tok.children if c.dep_ == 'prep' and c.lower_ in {'at', 'in'}
                   for g in c.children if g.dep_ == 'pobj']
        for place in places:
            word = place.lemma_.lower()
            if word in ARRIVALS or (place.pos_ in NOMINAL and word not in self.stop
                                     and not self._is_self(word)):
                return True
        return False


def _denied_after(tok: Token) -> bool:
    """A clause taken back right after it, or after the claim it reports: "the keys are in the
    drawer, but they aren't", "Ravi claims your glasses are in the car, but they aren't"."""
    for clause in (tok, tok.head) if tok.dep_ == 'ccomp' else (tok,):
        for c in clause.children:
            if c.dep_ == 'conj' and c.lemma_.lower() in {'be', 'do'} \
                    and any(g.dep_ == 'neg' for g in c.children) \
                    and all(g.dep_ in {'neg', 'punct', 'cc', 'advmod'}
                            or (g.dep_ == 'nsubj' and g.pos_ == 'PRON') for g in c.children) \
                    and any(g.lower_ == 'but' for g in (*clause.children, *c.children)):
                return True
    return False
