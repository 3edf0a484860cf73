"""The outcome a parse reports: success and failure cues, negation, arrival."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import (
    Cue,
    outcome_cues,
)
from brainmem_ros.encoders.reading_base import (
    ABILITY,
    ARRIVALS,
    NOMINAL,
    NOT_HAPPENED,
    conditional,
    imperative,
    verb_base,
)
from brainmem_ros.encoders.reading_entities import EntityReading
from brainmem_ros.memory.types import Outcome

if TYPE_CHECKING:
    from spacy.tokens import Token


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
                negated = self._negated(tok)
                if cue.only_negated:
                    if negated and not imperative(tok):
                        yield tok.i, cue.outcome, cue.valence
                    continue
                if negated or (not cue.particle and not self._counts_as_cue(tok, cue)):
                    continue
                yield tok.i, cue.outcome, cue.valence
            if (tok.pos_ in {'VERB', 'AUX'} and self._negated(tok) and not imperative(tok)
                    and any(c.lower_ in ABILITY for c in tok.children)):
                yield tok.i, Outcome.FAILURE, -0.5  # "could not open the jar"
            if lemma in {'reach', 'arrive'} and self._arrived(tok):
                yield tok.i, Outcome.SUCCESS, 0.4

    def _has_particle(self, tok: Token, particle: str) -> bool:
        nxt = tok.nbor(1).lower_ if tok.i + 1 < len(self.doc) else ''
        return nxt == particle or any(c.dep_ == 'prt' and c.lower_ == particle for c in tok.children)

    def _negated(self, tok: Token) -> bool:
        if any(c.dep_ == 'neg' or c.lower_ in NOT_HAPPENED for c in tok.children):
            return True
        if tok.head.lower_ in NOT_HAPPENED:
            return True  # "without dropping it"
        prev = tok.nbor(-1).lower_ if tok.i > 0 else ''
        return prev in {'not', "n't", 'never'} | NOT_HAPPENED

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
