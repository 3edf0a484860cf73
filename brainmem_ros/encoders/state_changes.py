"""Simple state changes stated in a text, found over tokens and entity spans.

Three patterns, each anchored on entity spans so nothing is invented:

* ``X [part] is [now] <state>``       -> X.part|state: open, closed, on, off...
* ``X is [now] in/on/at Y``            -> X.location: Y
* ``<verb>ed the X [part]``            -> X.part|state: the verb's result (opened -> open)
* ``<moved/put/...> the X [from W] to Y`` -> X.location: W -> Y (holder for people)
"""

from __future__ import annotations

from collections.abc import Sequence

from brainmem_ros.encoders.lexicon import (
    DETERMINERS,
    LOCATION_PREPOSITIONS,
    NEGATIONS,
    PLACING_VERBS,
    STATE_WORDS,
    VERB_FORMS,
    VERB_RESULT_STATES,
)
from brainmem_ros.encoders.rule_entities import Span
from brainmem_ros.encoders.tokens import Token, is_boundary
from brainmem_ros.memory.types import StateChange

_COPULA = frozenset({'is', 'are', 'was', 'were', "'s", "'re"})
_ADVERBS = frozenset({'now', 'still', 'already', 'currently', 'left', 'finally', 'again', 'all'})
_STATE_VALUES = frozenset({
    'open', 'closed', 'shut', 'empty', 'full', 'clean', 'dirty', 'dry', 'wet', 'broken',
    'cracked', 'locked', 'unlocked', 'on', 'off', 'stuck', 'blocked', 'jammed', 'tidy',
    'messy', 'charged', 'plugged', 'unplugged', 'hot', 'cold', 'ready', 'missing', 'lit',
    'running', 'occupied', 'free', 'low', 'spilled', 'fallen', 'loaded', 'folded',
})
_POWER = frozenset({'on', 'off'})
_CLAUSE_WORDS = frozenset({
    'and', 'but', 'then', 'while', 'so', 'because', 'after', 'before', 'when', 'until',
    'although', 'though', 'since',
})
_SKIPPABLE = DETERMINERS | STATE_WORDS | frozenset({'up', 'down', 'away', 'back', 'out'})
_SWITCH_VERBS = frozenset({'turn', 'switch'})
# An infinitive or negated verb states an intention or a failed attempt, not a change.
_NOT_DONE = NEGATIONS | frozenset({'to', 'unable'})


class _Parse:
    def __init__(self, tokens: Sequence[Token], spans: Sequence[Span]) -> None:
        self.tokens = tokens
        self.spans = spans
        self.span_at = {s.start: s for s in spans}

    def low(self, index: int) -> str:
        return self.tokens[index].low if 0 <= index < len(self.tokens) else ''

    def span_after(self, index: int, *, limit: int = 4) -> Span | None:
        """The entity span starting at ``index`` after skipping determiners and adjectives."""
        for _ in range(limit):
            if index in self.span_at:
                return self.span_at[index]
            if self.low(index) not in _SKIPPABLE and not self.low(index).isdigit():
                return None
            index += 1
        return None

    def clause_end(self, index: int) -> int:
        end = index
        while end < len(self.tokens):
            token = self.tokens[end]
            if is_boundary(token) or token.low == ',' or token.low in _CLAUSE_WORDS:
                break
            end += 1
        return end


def _attribute(span: Span, value: str) -> str:
    if span.part:
        return span.part
    return 'power' if value in _POWER else 'state'


def _copula_changes(parse: _Parse) -> list[tuple[int, StateChange]]:
    found: list[tuple[int, StateChange]] = []
    for span in parse.spans:
        j = span.end
        # Skip one "in the living room" style phrase between subject and verb.
        if parse.low(j) in LOCATION_PREPOSITIONS or parse.low(j) == 'of':
            inner = parse.span_after(j + 1)
            if inner is None:
                continue
            j = inner.end
        if parse.low(j) not in _COPULA:
            continue
        k = j + 1
        while parse.low(k) in _ADVERBS:
            k += 1
        if parse.low(k) in NEGATIONS:
            continue
        value = parse.low(k)
        place = parse.span_after(k + 1) if value in LOCATION_PREPOSITIONS else None
        if place is not None and place.name != span.name:
            attribute = 'holder' if place.type == 'person' else 'location'
            found.append((span.start, StateChange(span.name, attribute, '', place.name)))
        elif value in _STATE_VALUES and place is None:
            found.append((span.start, StateChange(span.name, _attribute(span, value), '', value)))
    return found


def _verb_changes(parse: _Parse) -> list[tuple[int, StateChange]]:
    found: list[tuple[int, StateChange]] = []
    for i, token in enumerate(parse.tokens):
        lemma = VERB_FORMS.get(token.low)
        if lemma is None or parse.low(i - 1) in _NOT_DONE or parse.low(i - 1) in DETERMINERS:
            continue
        if parse.low(i - 1) in _COPULA or parse.low(i - 2) in _NOT_DONE:
            continue
        j = i + 1
        particle = ''
        if parse.low(j) in {'on', 'off', 'up', 'out', 'down', 'away'}:
            particle = parse.low(j)
            j += 1
        target = parse.span_after(j)
        if target is None:
            continue
        if lemma in _SWITCH_VERBS:
            value = particle if particle in _POWER else parse.low(target.end)
            if value in _POWER:
                found.append((i, StateChange(target.name, _attribute(target, value), '', value)))
        elif lemma in VERB_RESULT_STATES:
            value = VERB_RESULT_STATES[lemma]
            found.append((i, StateChange(target.name, _attribute(target, value), '', value)))
        if lemma in PLACING_VERBS:
            found.extend((i, change) for change in _placement(parse, target))
    return found


def _placement(parse: _Parse, target: Span) -> list[StateChange]:
    before = after = ''
    attribute = 'location'
    k = target.end
    end = parse.clause_end(k)
    while k < end and not after:
        low = parse.low(k)
        if low == 'from' or low in LOCATION_PREPOSITIONS:
            place = parse.span_after(k + 1)
            if place is not None:
                if low == 'from':
                    before = before or place.name
                else:
                    after = place.name
                    attribute = 'holder' if place.type == 'person' else 'location'
                k = place.end
                continue
        k += 1
    if not after or after == target.name:
        return []
    return [StateChange(target.name, attribute, before, after)]


def find_state_changes(tokens: Sequence[Token], spans: Sequence[Span]) -> tuple[StateChange, ...]:
    """State changes stated in ``tokens`` about the entities in ``spans``.

    When the text changes the same attribute twice, the later statement wins.
    """
    parse = _Parse(tokens, spans)
    changes = _copula_changes(parse) + _verb_changes(parse)
    changes.sort(key=lambda pair: pair[0])
    latest: dict[tuple[str, str], StateChange] = {}
    for _, change in changes:
        latest.pop((change.object, change.attribute), None)
        latest[(change.object, change.attribute)] = change
    return tuple(latest.values())

