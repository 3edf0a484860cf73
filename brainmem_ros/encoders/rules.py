"""The fast-path extractor: grounded entities, actions, outcome and state changes by rule.

No model, well under a millisecond per observation, and nothing that is not in the
text (or in ``known_entities`` and the text): it is what Store runs synchronously,
and the floor the LLM enrichment is merged onto.

>>> from brainmem_ros.encoders.rules import RuleExtractor
>>> result = RuleExtractor().extract('Moved the red cup to the kitchen table.')
>>> [e.name for e in result.entities], result.actions
(['red cup', 'kitchen table'], ('move',))
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from brainmem_ros.encoders.lexicon import (
    COPULAS,
    DETERMINERS,
    FAILURE_CUES,
    NEGATIONS,
    NON_ACTION_VERBS,
    STATE_WORDS,
    SUCCESS_CUES,
    VERB_FORMS,
    verb_forms,
)
from brainmem_ros.encoders.rule_entities import Lexicon, Span, find_entities, type_of
from brainmem_ros.encoders.state_changes import find_state_changes
from brainmem_ros.encoders.tokens import Token, tokenize
from brainmem_ros.errors import ConfigError
from brainmem_ros.memory.types import Entity, Extraction, Outcome, normalise_name

_CUES: tuple[tuple[re.Pattern[str], Outcome, float], ...] = tuple(
    [(re.compile(p), Outcome.FAILURE, v) for p, v in FAILURE_CUES]
    + [(re.compile(p), Outcome.SUCCESS, v) for p, v in SUCCESS_CUES]
)
_WORD = re.compile(r"[a-z']+")
_ADVERBS = frozenset({'now', 'still', 'already', 'not', "n't", 'all', 'completely', 'left'})
_LEAVE_OBJECTS = frozenset({'it', 'them', 'him', 'her', 'me', 'us', 'home', 'for', 'behind'})
_DETERMINERS = DETERMINERS - {"'s"}  # "it's" is a copula here, not a possessive


def _is_negated(text: str, start: int) -> bool:
    before = _WORD.findall(text[max(0, start - 24):start])[-2:]
    return any(w in NEGATIONS or w.endswith("n't") for w in before)


def find_outcome(text: str) -> tuple[Outcome, float | None]:
    """Outcome and valence from cue phrases; the last cue in the text wins.

    "It slipped twice, but the third grasp succeeded" ends in success. A cue right
    after a negation ("did not fail", "without dropping it") does not count.
    """
    low = text.lower().replace('\u2019', "'")
    best: tuple[int, Outcome, float] | None = None
    for pattern, outcome, valence in _CUES:
        for match in pattern.finditer(low):
            if _is_negated(low, match.start()):
                continue
            if best is None or match.start() > best[0]:
                best = (match.start(), outcome, valence)
    if best is None:
        return Outcome.UNKNOWN, None
    return best[1], best[2]


def _low(tokens: Sequence[Token], index: int) -> str:
    return tokens[index].low if 0 <= index < len(tokens) else ''


def _is_action(tokens: Sequence[Token], index: int, lemma: str, span_starts: set[int]) -> bool:
    word = tokens[index].low
    prev, nxt = _low(tokens, index - 1), _low(tokens, index + 1)
    if prev in _DETERMINERS:
        return False  # "the drop", "the open door": a noun or an adjective
    if word in STATE_WORDS:
        before = index - 1
        while _low(tokens, before) in _ADVERBS and before > 0:
            before -= 1
        if _low(tokens, before) in COPULAS or index + 1 in span_starts:
            return False  # "the door is open", "a broken glass"
    if word == 'left' and nxt not in _DETERMINERS and nxt not in _LEAVE_OBJECTS:
        return False  # "turned left", "on the left"
    if lemma == 'close' and nxt in {'to', 'by'}:
        return False
    return not (lemma == 'start' and (nxt == 'to' or nxt.endswith('ing')))


class RuleExtractor:
    """Extractor that only reports what its word lists find in the text.

    ``extra_nouns`` maps more object names to entity types (e.g. a site's own
    equipment), ``extra_verbs`` adds action verbs in base form.
    """

    def __init__(self, *, extra_nouns: Mapping[str, str] | None = None,
                 extra_verbs: Iterable[str] = ()) -> None:
        nouns = dict(extra_nouns or {})
        for name, kind in nouns.items():
            if not normalise_name(name) or not kind.strip():
                msg = f'extra_nouns: empty name or type in {name!r}: {kind!r}'
                raise ConfigError(msg)
        self._lexicon = Lexicon(nouns.items())
        self._verb_forms = {**VERB_FORMS, **verb_forms(v.strip().lower() for v in extra_verbs)}

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        """Entities, actions, state changes and outcome found in ``text``."""
        tokens = tokenize(text)
        spans = self._spans(tokens, known_entities)
        outcome, valence = find_outcome(text)
        return Extraction(
            entities=_unique_entities(spans),
            actions=self._actions(tokens, spans),
            state_changes=find_state_changes(tokens, spans),
            outcome=outcome,
            valence=valence,
        )

    def entity_spans(self, text: str, *, known_entities: Sequence[str] = ()) -> list[Span]:
        """Entity mentions with their token positions in ``tokenize(text)``."""
        return self._spans(tokenize(text), known_entities)

    def _spans(self, tokens: Sequence[Token], known_entities: Sequence[str]) -> list[Span]:
        known = Lexicon(((n, type_of(normalise_name(n))) for n in known_entities),
                        vocabulary=False)
        return find_entities(tokens, self._lexicon, known)

    def _actions(self, tokens: Sequence[Token], spans: Sequence[Span]) -> tuple[str, ...]:
        covered = {i for s in spans for i in range(s.start, s.end)}
        starts = {s.start for s in spans}
        actions: dict[str, None] = {}
        for index, token in enumerate(tokens):
            if index in covered or not token.is_word or token.low in NON_ACTION_VERBS:
                continue
            lemma = self._verb_forms.get(token.low)
            if lemma is not None and _is_action(tokens, index, lemma, starts):
                actions[lemma] = None
        return tuple(actions)


def _unique_entities(spans: Sequence[Span]) -> tuple[Entity, ...]:
    seen: dict[str, Entity] = {}
    for span in spans:
        seen.setdefault(span.name, Entity(name=span.name, type=span.type))
    return tuple(seen.values())
