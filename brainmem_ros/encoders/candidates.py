"""Phrases of a text an LLM may choose from: noun phrases and verb lemmas.

The extractor's grammar only lets the model answer with these, so its entities and
actions are spans of the text by construction; a 270M model cannot abstain, so
candidates are few and syntactic (a noun phrase follows a determiner or is a
capitalised name; a verb is inflected or follows "to"/a modal), and spans the rule
extractor already covers are left out.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from brainmem_ros.encoders.grounding import VERB_SLOTS, is_nominal
from brainmem_ros.encoders.lexicon import (
    COMPOUND_MODIFIERS,
    COPULAS,
    DETERMINERS,
    MODIFIERS,
    NEGATIONS,
    NON_ACTION_VERBS,
    NOUN_TYPES,
    PREPOSITIONS,
    STATE_WORDS,
    VERB_FORMS,
    singular,
)
from brainmem_ros.encoders.tokens import Token, is_boundary, tokenize

MAX_PHRASE_WORDS = 3
_STOP = DETERMINERS | PREPOSITIONS | NON_ACTION_VERBS | NEGATIONS | STATE_WORDS | frozenset({
    'and', 'or', 'but', 'so', 'then', 'while', 'when', 'because', 'it', 'them', 'i', 'me',
    'again', 'now', 'still', 'already', 'very', 'too', 'also', 'just',
})
# Quality adjectives are not part of a name (the labelling guideline keeps colour,
# material, size and position words only): "the frozen peas" -> peas.
_ADJECTIVE_SUFFIXES = ('en', 'ed', 'ing', 'ous', 'ful', 'less', 'ive', 'able', 'ible', 'ish')
_ADJECTIVES = frozenset({
    'new', 'old', 'wet', 'dry', 'hot', 'cold', 'warm', 'cool', 'heavy', 'light', 'narrow', 'wide',
    'dirty', 'clean', 'broken', 'empty', 'full', 'open', 'closed', 'strange', 'usual', 'same',
    'whole', 'half', 'next', 'other', 'only', 'own', 'nice', 'good', 'bad', 'loose', 'tight',
})
# Stems that need their final e back ("tangl" -> tangle, "balanc" -> balance).
_NEEDS_E = ('bl', 'cl', 'dl', 'fl', 'gl', 'kl', 'pl', 'tl', 'zl', 'v', 'c', 'u', 'is', 'iz', 'ys')


@dataclass(frozen=True)
class Candidates:
    """Entity phrases and action lemmas found in a text, in text order."""

    entities: tuple[str, ...]
    actions: tuple[str, ...]


def _noun_phrases(tokens: Sequence[Token], covered: Collection[int]) -> list[str]:
    found: list[str] = []
    for i, token in enumerate(tokens):
        after_determiner = i > 0 and tokens[i - 1].low in DETERMINERS
        name_like = (token.is_capitalised and i > 0 and not is_boundary(tokens[i - 1])
                     and not token.text.isupper())
        if not (after_determiner or name_like) or not token.is_word:
            continue
        words: list[str] = []
        j = i
        while (j < len(tokens) and len(words) < MAX_PHRASE_WORDS and tokens[j].is_word
               and tokens[j].low not in _STOP and j not in covered):
            words.append(tokens[j].low)
            j += 1
        if j in covered or (i - 1) in covered:
            continue  # a piece of an entity already found ("the leftover [pizza]", "[Mr] Patel")
        # The head is the last word that is not a verb form ("the cup fell" -> cup).
        while words and words[-1] in VERB_FORMS and singular(words[-1]) not in NOUN_TYPES:
            words.pop()
        while len(words) > 1 and _is_quality_adjective(words[0]):
            words.pop(0)
        if words and is_nominal(words):
            phrase = ' '.join(words)
            if phrase not in found:
                found.append(phrase)
    return found


def _is_quality_adjective(word: str) -> bool:
    if word in MODIFIERS or word in NOUN_TYPES or word in COMPOUND_MODIFIERS:
        return False
    return word in _ADJECTIVES or word in STATE_WORDS or word.endswith(_ADJECTIVE_SUFFIXES)


def guess_lemma(word: str) -> str:
    """Base form of an inflected verb that is not in the vocabulary (coiled -> coil)."""
    if word.endswith('ied'):
        return word[:-3] + 'y'
    for suffix in ('ing', 'ed'):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[:-len(suffix)]
            if stem[-1] == stem[-2] and stem[-1] not in 'lsz':
                return stem[:-1]
            return stem + 'e' if stem.endswith(_NEEDS_E) else stem
    return word


def _verbs(tokens: Sequence[Token], covered: Collection[int]) -> list[str]:
    """Verbs the rules cannot judge: unknown words inflected as verbs or after "to"."""
    found: list[str] = []
    for i, token in enumerate(tokens):
        low = token.low
        prev = tokens[i - 1].low if i > 0 else ''
        if (i in covered or not token.is_word or low in VERB_FORMS or low in _STOP
                or singular(low) in NOUN_TYPES or prev in DETERMINERS or prev in COPULAS):
            continue
        if low.endswith(('ed', 'ing')):
            lemma = guess_lemma(low)
        elif prev in VERB_SLOTS and not token.is_capitalised:
            lemma = low
        else:
            continue
        if len(lemma) > 2 and lemma not in found:
            found.append(lemma)
    return found


def find_candidates(text: str, *, covered_entities: Sequence[str] = (),
                    covered_spans: Sequence[tuple[int, int]] = ()) -> Candidates:
    """Candidates in ``text`` outside the entities already found.

    ``covered_spans`` are ``[start, end)`` token ranges of ``tokenize(text)`` (e.g.
    ``RuleExtractor.entity_spans``); ``covered_entities`` are names, whose every
    occurrence is covered. Neither a covered token nor a phrase touching one is a
    candidate, so the model cannot return a fragment of a known entity.
    """
    tokens = tokenize(text)
    keys = [singular(t.low) if t.is_word else '' for t in tokens]
    covered: set[int] = {i for start, end in covered_spans for i in range(start, end)}
    for name in covered_entities:
        words = tuple(singular(w) for w in name.split())
        size = len(words)
        for i in range(len(keys) - size + 1):
            if size and tuple(keys[i:i + size]) == words:
                covered.update(range(i, i + size))
    return Candidates(tuple(_noun_phrases(tokens, covered)),
                      tuple(_verbs(tokens, covered)))
