"""Keep only what a text (or a known entity) supports; count the rest.

A small LLM copies prompt content and invents plausible objects. Everything it
proposes passes through these filters: an entity must occur in the text as a
contiguous phrase headed by a noun, an action must be the lemma of a verb in the
text, a state change must name a grounded entity and a value found in the text. Given
the parser's words of the text, every word of a name and every action must also be a
surface word or a token lemma of it: a model's malformed lemma ("morn", "updat") is no
word of the text.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from brainmem_ros.encoders.lexicon import (
    DETERMINERS,
    NON_ACTION_VERBS,
    NOT_ENTITIES,
    NOUN_TYPES,
    PREPOSITIONS,
    STATE_WORDS,
    VERB_FORMS,
    VERBS,
    singular,
)
from brainmem_ros.encoders.rule_entities import type_of
from brainmem_ros.encoders.tokens import Token, tokenize, verb_lemmas
from brainmem_ros.memory.types import Entity, StateChange, normalise_name

T = TypeVar('T')

MAX_NAME_WORDS = 5
#: Words after which a verb follows in its base form.
VERB_SLOTS = frozenset({'to', 'will', 'would', 'can', 'could', 'should', 'must', "n't", 'not',
                        'please', 'i', 'we', 'they', 'he', 'she'})
#: Attributes a state change may name without the word being in the text.
ATTRIBUTES = frozenset({'state', 'location', 'power', 'holder', 'position', 'level', 'contents'})

_FUNCTION_WORDS = DETERMINERS | PREPOSITIONS | NON_ACTION_VERBS | frozenset({
    'and', 'or', 'but', 'so', 'then', 'i', 'me', 'my', 'we', 'you', 'he', 'she', 'it',
    'they', 'them', 'him', 'her', 'us', 'what', 'which', 'who', 'where', 'there', 'here',
    'not', "n't", 'very', 'too', 'now', 'again', 'still', 'just', 'also', 'while', 'when',
    'as', 'like', 'than', 'if', 'whether', 'because', 'until', 'unless', 'please', 'yes',
})
# Abstract nouns a robot log is full of and a memory should not index as things.
_ABSTRACT = frozenset({
    'time', 'minute', 'second', 'hour', 'moment', 'attempt', 'try', 'percent', 'cycle',
    'grip', 'task', 'job', 'way', 'path', 'route', 'side', 'left', 'right', 'front', 'back',
    'top', 'bottom', 'piece', 'part', 'lot', 'bit', 'kind', 'sort', 'number', 'place',
    'spot', 'area', 'direction', 'distance', 'speed', 'problem', 'issue', 'incident',
    'observation', 'data', 'instruction', 'entity', 'action', 'text', 'output', 'input',
})
_ABSTRACT_SUFFIXES = ('tion', 'sion', 'ment', 'ness', 'ity', 'ance', 'ence', 'ism', 'ing', 'ly')


@dataclass(frozen=True)
class Grounded(Generic[T]):
    """Items that passed grounding and how many were dropped."""

    kept: tuple[T, ...]
    dropped: int


class TextEvidence:
    """The words of one text, indexed for grounding checks."""

    def __init__(self, text: str, *, words: frozenset[str] | None = None) -> None:
        #: Surface words and spaCy token lemmas of the text (None: not checked).
        self.words = words
        tokens = tokenize(text)
        self._words: tuple[str, ...] = tuple(singular(t.low) for t in tokens if t.is_word)
        self._lows: frozenset[str] = frozenset(t.low for t in tokens if t.is_word)
        lemmas = {lemma for t in tokens if t.is_word and _may_be_verb(t) for lemma in _verb_lemmas(t)}
        # A base form right after "to" or a modal is a verb too ("had to reinitialise").
        lemmas.update(t.low for prev, t in itertools.pairwise(tokens)
                      if prev.low in VERB_SLOTS and t.is_word and _may_be_verb(t)
                      and t.low not in _FUNCTION_WORDS and not t.is_capitalised)
        self._lemmas: frozenset[str] = frozenset(lemmas)
        self._values: frozenset[str] = self._lows | frozenset(self._words) | frozenset(
            lemma for t in tokens if t.is_word for lemma in verb_lemmas(t.low))

    def has_phrase(self, words: Sequence[str]) -> bool:
        """True when ``words`` (singularised) occur contiguously in the text."""
        if not words:
            return False
        keys = tuple(singular(w) for w in words)
        size = len(keys)
        return any(self._words[i:i + size] == keys for i in range(len(self._words) - size + 1))

    def has_word(self, word: str) -> bool:
        """True when ``word`` or its singular occurs in the text."""
        return word in self._lows or singular(word) in self._words

    def has_verb(self, lemma: str) -> bool:
        """True when some verb in the text has ``lemma`` as its base form."""
        return lemma in self._lemmas

    def is_word(self, word: str) -> bool:
        """True when ``word`` is a surface word or a token lemma of the text (or unchecked)."""
        return self.words is None or word in self.words

    def has_value(self, value: str) -> bool:
        """True when every word of ``value`` is in the text (as a word or a verb's base)."""
        words = value.split()
        return bool(words) and all(w in self._values for w in words)


def _may_be_verb(token: Token) -> bool:
    low = token.low
    return low not in NON_ACTION_VERBS and (low in VERB_FORMS or singular(low) not in NOUN_TYPES)


def _verb_lemmas(token: Token) -> frozenset[str]:
    """Lemmas a token supports as an action.

    Known verbs give their table lemma. An unknown word counts only when it is
    inflected as a verb (-ed, -ing): otherwise any noun would ground itself.
    """
    low = token.low
    if low in VERB_FORMS:
        return frozenset({VERB_FORMS[low]})
    if low.endswith(('ed', 'ing')):
        return frozenset(v for v in verb_lemmas(low) if v != low)
    return frozenset()


def is_nominal(words: Sequence[str]) -> bool:
    """True when ``words`` look like a concrete noun phrase (no function words, a noun head)."""
    if not words or len(words) > MAX_NAME_WORDS:
        return False
    if any(w in _FUNCTION_WORDS or not w.replace('-', '').isalpha() for w in words):
        return False
    name = ' '.join(words)
    head = words[-1]
    if name in NOT_ENTITIES or head in NOT_ENTITIES:
        return False
    if name in NOUN_TYPES or singular(head) in NOUN_TYPES:
        return True
    if head in _ABSTRACT or singular(head) in _ABSTRACT or head.endswith(_ABSTRACT_SUFFIXES):
        return False
    return head not in STATE_WORDS and (head not in VERB_FORMS or head in NOUN_TYPES)


def ground_entities(names: Iterable[str], evidence: TextEvidence, *,
                    known_entities: Sequence[str] = ()) -> Grounded[Entity]:
    """Entities whose name occurs in the text as a noun phrase.

    A known entity counts as grounded when the text names its head noun: "the cup"
    in the text lets the extractor report the known "red cup".
    """
    known = {normalise_name(k): normalise_name(k) for k in known_entities if normalise_name(k)}
    kept: dict[str, Entity] = {}
    dropped = 0
    for raw in names:
        name = normalise_name(raw.strip().strip('.,;:!?"\''))
        words = name.split()
        grounded = is_nominal(words) and evidence.has_phrase(words)
        if not grounded and name in known:
            grounded = evidence.has_word(words[-1])
        grounded = grounded and all(evidence.is_word(w) for w in words)
        if not grounded:
            dropped += 1
            continue
        kept.setdefault(name, Entity(name=name, type=type_of(name)))
    return Grounded(tuple(kept.values()), dropped)


def normalise_action(action: str) -> str:
    """Base form of a proposed action: first word, lower case, table lemma if known."""
    words = action.strip().lower().split()
    if not words:
        return ''
    word = words[0].strip('.,;:!?"\'')
    return VERB_FORMS.get(word, word)


def ground_actions(actions: Iterable[str], evidence: TextEvidence) -> Grounded[str]:
    """Actions that are the base form of a verb in the text."""
    kept: dict[str, None] = {}
    dropped = 0
    for raw in actions:
        lemma = normalise_action(raw)
        if (not lemma or lemma in NON_ACTION_VERBS or not evidence.has_verb(lemma)
                or not evidence.is_word(lemma)):
            dropped += 1
            continue
        if lemma not in VERBS and lemma in NOUN_TYPES:
            dropped += 1
            continue
        kept[lemma] = None
    return Grounded(tuple(kept), dropped)


def ground_state_changes(changes: Iterable[StateChange], evidence: TextEvidence, *,
                         entities: Sequence[Entity] = ()) -> Grounded[StateChange]:
    """State changes about a grounded entity, with values found in the text.

    ``entities`` (already grounded) also accepts an object named by one of them.
    """
    names = {e.name for e in entities}
    kept: dict[tuple[str, str], StateChange] = {}
    dropped = 0
    for change in changes:
        obj = normalise_name(change.object)
        attribute = change.attribute.strip().lower()
        after = normalise_name(change.after)
        before = normalise_name(change.before)
        obj_ok = obj in names or (is_nominal(obj.split()) and evidence.has_phrase(obj.split()))
        attr_ok = attribute in ATTRIBUTES or (attribute.isalpha() and evidence.has_word(attribute))
        after_ok = bool(after) and evidence.has_value(after) and after != obj
        before_ok = not before or evidence.has_value(before)
        if not (obj_ok and attr_ok and after_ok and before_ok):
            dropped += 1
            continue
        kept[(obj, attribute)] = StateChange(obj, attribute, before, after)
    return Grounded(tuple(kept.values()), dropped)
