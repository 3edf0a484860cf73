"""The actions a parse names: verbs, gerunds, skills, snake_case and CamelCase commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import (
    non_actions,
    outcome_cues,
)
from brainmem_ros.encoders.reading_base import (
    NOMINAL,
    PLACE_PREPS,
    SNAKE,
    ReadingBase,
    determined,
    present_copula,
)
from brainmem_ros.encoders.verb_forms import undouble, verb_base

if TYPE_CHECKING:
    from spacy.tokens import Token


class ActionReading(ReadingBase):
    """The actions a parse names (a layer of a parse reading)."""

    def actions(self) -> tuple[str, ...]:
        """The action lemmas the parse names, in text order."""
        never, aspect = non_actions()
        found: dict[int, str] = dict(self.camel_actions)
        for tok in self.doc:
            if tok.i in self.skip or tok.i in found:
                continue
            lemma = self._action_lemma(tok, never, aspect)
            if lemma:
                found[tok.i] = lemma
        return tuple(dict.fromkeys(found[i] for i in sorted(found)))

    def _action_lemma(self, tok: Token, never: frozenset[str], aspect: frozenset[str]) -> str:
        if SNAKE.match(tok.text):
            return tok.text.split('_')[0].lower() if self._snake_action(tok) else ''
        gerund = self._gerund_action(tok) or self._skill_action(tok)
        if gerund:
            return gerund
        if tok.i in self.as_verb:
            return verb_base(tok.lower_, self.verbs, self.irregular)
        if self._postposed_participle(tok):
            return verb_base(tok.lower_, self.verbs, self.irregular)
        if tok.pos_ != 'VERB' or tok.i in self.as_noun:
            return ''
        lemma = tok.lemma_.lower()
        if lemma not in self.verbs:
            lemma = verb_base(tok.lower_, self.verbs, self.irregular) or undouble(lemma)
        if lemma in never or not lemma.isalpha():
            return ''
        if lemma in aspect and any(c.dep_ in {'xcomp', 'ccomp'} and c.pos_ in {'VERB', 'AUX'}
                                   for c in tok.children):
            return ''
        if lemma in aspect and any(c.dep_ in {'nsubj', 'nsubjpass'} and self._gerund_action(c)
                                   for c in tok.children):
            return ''  # "docking started": the action is the docking
        if tok.dep_ in {'amod', 'compound'}:
            return ''  # "a chipped cup", "the drying rack"
        if tok.tag_ == 'VBN':
            if tok.dep_ == 'acl' and not any(c.dep_ == 'agent' for c in tok.children):
                return ''  # "a table covered in papers"
            if present_copula(tok):
                return ''  # "the cabinet is locked": a state
        if tok.tag_ in {'VBN', 'VBD'} and tok.lower_ in self.states and not any(
                c.dep_ in {'dobj', 'obj', 'agent'} for c in tok.children):
            return ''  # "window closed", "door open"
        return lemma

    def _postposed_participle(self, tok: Token) -> bool:
        """"Lidar disconnected at 14:02": an -ed form after its noun, tagged as an adjective,
        is the predicate of a telegraphic clause (a state word stays a state)."""
        return (tok.pos_ == 'ADJ' and tok.dep_ == 'amod' and tok.head.i < tok.i
                and tok.lower_.endswith('ed') and tok.lower_ not in self.states
                and bool(verb_base(tok.lower_, self.verbs, self.irregular)))

    def _gerund_action(self, tok: Token) -> str:
        """"Docking failed", "path following": an -ing noun naming an activity."""
        word = tok.lower_
        if tok.pos_ not in NOMINAL or not word.endswith('ing') or len(word) < 6:
            return ''
        if tok.dep_ == 'compound' or determined(tok):
            return ''
        stem = word[:-3]
        for base in (stem, stem + 'e', stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else ''):
            if base and base in self.verbs:
                return base
        return ''

    def _skill_action(self, tok: Token) -> str:
        """"Grasp failed", "Pour complete", "Spin recovery succeeded": a skill name."""
        word = tok.lower_
        if tok.pos_ not in NOMINAL or word not in self.verbs:
            return ''
        if any(c.dep_ in {'det', 'poss', 'nummod'} for c in tok.children):
            return ''
        before = tok.i - 1
        while before >= 0 and before in self.skip:
            before -= 1
        if before >= 0 and self.doc[before].text not in {':', '-', ';', ',', '>', '.'}:
            return ''
        cues = {c.lemma for c in outcome_cues() if not c.only_negated}
        window = self.doc[tok.i + 1:tok.i + 3]
        return word if any(t.lemma_.lower() in cues or t.lower_ in cues for t in window) else ''

    def _snake_action(self, tok: Token) -> bool:
        """An identifier opening with a verb names a skill ("pick_object", "open_door"), unless
        the clause uses it as a thing: where something is ("on the spice_rack"), or what a
        verb acts on other than one that runs software ("put water_bottle on shelf", not
        "running pick_object")."""
        word = tok.text.lower()
        if any(c.isdigit() for c in word) or word.split('_')[0] not in self.verbs or self._is_self(word):
            return False
        thing = (tok.dep_ == 'pobj' and tok.head.lower_ in PLACE_PREPS | {'from'}) or (
            tok.dep_ == 'dobj' and tok.head.lemma_.lower() not in _RUNS)
        return not thing


# Verbs whose object is a skill, not a thing ("running pick_object", "aborted place_object").
_RUNS = frozenset({'run', 'execute', 'start', 'call', 'launch', 'abort', 'cancel', 'trigger', 'invoke',
                   'retry', 'resume', 'stop', 'begin', 'finish', 'complete', 'fail', 'skip'})
