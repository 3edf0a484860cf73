"""Find entity mentions in tokens: vocabulary nouns, compounds, modifiers, names.

Every span points at the tokens it came from, so whatever the rule extractor
reports is in the text by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from brainmem_ros.encoders.lexicon import (
    COMPOUND_MODIFIERS,
    DETERMINERS,
    MODIFIERS,
    NON_ACTION_VERBS,
    NOT_ENTITIES,
    NOUN_TYPES,
    PART_OWNER_TYPES,
    PARTS,
    PERSON_NAMES,
    PREPOSITIONS,
    STATE_WORDS,
    VERB_FORMS,
    singular,
)
from brainmem_ros.encoders.tokens import Token, is_boundary
from brainmem_ros.memory.types import normalise_name

# A noun-verb homograph right after one of these is a verb ("I saw", "to water").
_VERB_BEFORE = frozenset({
    'i', 'we', 'you', 'he', 'she', 'they', 'to', 'will', 'would', 'can', 'could', 'should',
    'must', "n't", 'not', 'please', 'then', 'also', 'just', "'ll",
})
# ...and right before one of these it is a verb too ("water the plants").
_VERB_OBJECTS = frozenset({
    'it', 'them', 'him', 'her', 'me', 'us', 'everything', 'something', 'up', 'down', 'out',
})
# Capitalised unknown words next to these are taken for people's names.
_NAME_BEFORE = frozenset({
    'to', 'for', 'with', 'from', 'by', 'told', 'asked', 'helped', 'greeted', 'gave', 'handed',
    'followed', 'follow', 'met', 'called', 'reminded', 'thanked', 'brought', 'showed', 'and',
    'tell', 'ask', 'help', 'greet', 'remind', 'give', 'hand', 'bring', 'show', 'find', 'found',
    'saw', 'see',
})
_NAME_AFTER = frozenset({
    'asked', 'said', 'told', 'wants', 'wanted', 'is', 'was', 'came', 'left', 'entered',
    'called', 'says', "'s", 'asks', 'needs', 'needed', 'likes', 'sat', 'went', 'tells',
    'arrived', 'walked', 'gave', 'handed', 'dropped', 'put', 'took', 'opened', 'closed',
    'and', 'has', 'had', 'will', 'would', 'fell', 'smiled', 'waved', 'requested',
})
_KNOWN_WORDS = (
    frozenset(NOUN_TYPES) | frozenset(VERB_FORMS) | MODIFIERS | DETERMINERS | PREPOSITIONS
    | NON_ACTION_VERBS | STATE_WORDS | COMPOUND_MODIFIERS | NOT_ENTITIES
    | frozenset({'successfully', 'unable', 'then', 'there', 'here', 'please', 'ok', 'okay',
                 'yes', 'no', 'now', 'today', 'yesterday', 'tomorrow', 'after', 'before',
                 'while', 'when', 'because', 'but', 'and', 'or', 'so', 'again', 'still',
                 'finally', 'eventually', 'also', 'nothing', 'someone', 'somebody',
                 'everyone', 'nobody', 'where', 'what', 'who', 'why', 'how', 'which'})
)
# Nouns that are far more often a modal or a verb than an object.
_DETERMINER_ONLY_NOUNS = frozenset({'can'})
_MAX_WORDS = 4
_COUNTS = frozenset({'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten',
                     'several', 'many', 'few', 'some', 'clean', 'dirty', 'empty'})


@dataclass(frozen=True)
class Span:
    """An entity mention: tokens ``[start, end)``, its name, type and named part."""

    start: int
    end: int
    name: str
    type: str
    part: str = ''


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    name: str
    type: str
    known: bool


def _key(words: Iterable[str]) -> tuple[str, ...]:
    return tuple(singular(w) for w in words)


class Lexicon:
    """Vocabulary nouns (plus caller-supplied names) indexed for longest-match lookup."""

    def __init__(self, entries: Iterable[tuple[str, str]] = (), *, vocabulary: bool = True) -> None:
        self._entries: dict[tuple[str, ...], tuple[str, str]] = {}
        base = list(NOUN_TYPES.items()) if vocabulary else []
        for name, kind in base + list(entries):
            self.add(name, kind)

    def add(self, name: str, kind: str) -> None:
        """Register ``name`` (normalised) with entity type ``kind``."""
        norm = normalise_name(name)
        if norm:
            self._entries[_key(norm.split())] = (norm, kind)

    def lookup(self, key: tuple[str, ...]) -> tuple[str, str] | None:
        """Canonical name and type for a tuple of singularised words."""
        return self._entries.get(key)


def type_of(name: str) -> str:
    """Entity type of a normalised name: its own, its head noun's, else ``object``."""
    if name in NOUN_TYPES:
        return NOUN_TYPES[name]
    words = name.split()
    for start in range(1, len(words)):
        tail = ' '.join(_key(words[start:]))
        if tail in NOUN_TYPES:
            return NOUN_TYPES[tail]
    head = singular(words[-1]) if words else ''
    return NOUN_TYPES.get(head, 'object')


def _low(tokens: Sequence[Token], index: int) -> str:
    if 0 <= index < len(tokens):
        return tokens[index].low
    return ''


def _is_verb_here(tokens: Sequence[Token], index: int) -> bool:
    """Whether a word that is both a noun and a verb form is used as a verb here."""
    prev, nxt = _low(tokens, index - 1), _low(tokens, index + 1)
    if prev in DETERMINERS or prev in MODIFIERS or (prev in PREPOSITIONS and prev != 'to'):
        return False
    if tokens[index].low in _DETERMINER_ONLY_NOUNS:
        return True
    if prev in _VERB_BEFORE:
        return True
    return nxt in DETERMINERS or nxt in _VERB_OBJECTS


def _match_units(tokens: Sequence[Token], lexicon: Lexicon, known: Lexicon) -> list[_Unit]:
    units: list[_Unit] = []
    i = 0
    while i < len(tokens):
        best: _Unit | None = None
        for size in range(_MAX_WORDS, 0, -1):
            window = tokens[i:i + size]
            if len(window) < size or not all(t.is_word for t in window):
                continue
            key = _key(t.low for t in window)
            hit_known = known.lookup(key)
            hit = hit_known or lexicon.lookup(key)
            if hit is None:
                continue
            if size == 1 and hit_known is None:
                low = window[0].low
                if (low in VERB_FORMS or low in _DETERMINER_ONLY_NOUNS) and _is_verb_here(tokens, i):
                    continue
            name = hit[0]
            if name == 'glasses' and (_low(tokens, i - 1) in _COUNTS or _low(tokens, i - 1).isdigit()):
                name = 'glass'  # "four glasses" are drinking glasses, not spectacles
            best = _Unit(i, i + size, name, hit[1], hit_known is not None)
            break
        if best is None:
            i += 1
            continue
        units.append(best)
        i = best.end
    return units


def _chain(tokens: Sequence[Token], units: list[_Unit]) -> list[Span]:
    """Merge adjacent nouns into compounds and attach preceding modifiers."""
    spans: list[Span] = []
    k = 0
    while k < len(units):
        group = [units[k]]
        while (k + 1 < len(units) and units[k + 1].start == group[-1].end
               and group[-1].type != 'person' and units[k + 1].type != 'person'):
            k += 1
            group.append(units[k])
        k += 1
        start = group[0].start
        # A compound modifier that is not itself a noun ("dining", "cutting").
        while start > 0 and tokens[start - 1].low in COMPOUND_MODIFIERS and not (
                spans and spans[-1].end == start):
            start -= 1
        words = [t.low for t in tokens[start:group[0].start]]
        part = ''
        head = group[-1]
        if (len(group) > 1 and head.name.split()[-1] in PARTS and not head.known
                and group[-2].type in PART_OWNER_TYPES):
            part = head.name.split()[-1]
            group = group[:-1]
        words += [u.name for u in group]
        kind = group[-1].type
        while start > 0 and tokens[start - 1].low in MODIFIERS and not (
                spans and spans[-1].end == start):
            start -= 1
            words.insert(0, tokens[start].low)
        name = normalise_name(' '.join(words))
        spans.append(Span(start, group[-1].end if not part else head.end, name, kind, part))
    return spans


def _is_sentence_start(tokens: Sequence[Token], index: int) -> bool:
    return index == 0 or is_boundary(tokens[index - 1]) or tokens[index - 1].low in {'"', '('}


def _names(tokens: Sequence[Token], taken: set[int]) -> list[Span]:
    """People's names: known first names, or capitalised unknown words in a name slot."""
    found: list[Span] = []
    for i, token in enumerate(tokens):
        if i in taken or not token.is_word or not token.is_capitalised:
            continue
        low = token.low
        if low in PERSON_NAMES:
            found.append(Span(i, i + 1, low, 'person'))
            continue
        if low in _KNOWN_WORDS or low.endswith('ly') or token.text.isupper() or len(low) < 2:
            continue
        prev, nxt = _low(tokens, i - 1), _low(tokens, i + 1)
        if _is_sentence_start(tokens, i):
            if nxt in _NAME_AFTER:
                found.append(Span(i, i + 1, low, 'person'))
        elif prev in _NAME_BEFORE or nxt in _NAME_AFTER:
            found.append(Span(i, i + 1, low, 'person'))
    return found


def find_entities(tokens: Sequence[Token], lexicon: Lexicon, known: Lexicon) -> list[Span]:
    """Entity spans in ``tokens``, in text order, without robot self-references."""
    spans = _chain(tokens, _match_units(tokens, lexicon, known))
    taken = {i for s in spans for i in range(s.start, s.end)}
    spans += _names(tokens, taken)
    spans.sort(key=lambda s: s.start)
    return [s for s in spans if s.name and s.name not in NOT_ENTITIES]
