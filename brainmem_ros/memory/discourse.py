"""What an utterance says of a thing it names only by a pronoun, from the one before it.

People talk in turns: "Lucía: I've put my passport in the desk drawer." then "Lucía: Hmm,
actually, it's in my backpack." The second says where the passport is, but names it only
"it"; read alone (as the extractor reads each observation) it places nothing. Here the
previous observation of the same episode supplies the thing: the last one it placed.

Only for a place: an utterance that places nothing itself, with "it", "they" or "them"
before a preposition of place and a thing it names ("it's in my backpack", "I'm leaving
them on the kitchen table"). Negations, questions, plans and conditions state nothing
("it's not there", "is it in the car?", "I'll put it on the shelf"). Such a claim is a
``fallback``: less sure than what a sentence says outright.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from brainmem_ros.memory.entity_names import DETERMINERS, find_name, name_words, text_words
from brainmem_ros.memory.facts import CONFIDENCE, HOLDER, LOCATION, Claim, claims_of
from brainmem_ros.memory.types import MemoryUnit

_PRONOUNS = frozenset({'it', "it's", 'they', "they're", 'them'})
_PLACE_PREPS = frozenset({'in', 'on', 'under', 'inside', 'into', 'onto', 'behind', 'beside', 'by', 'at',
                          'near', 'underneath', 'beneath'})
# Words that make a clause no statement of where a thing is now.
_NOT_SO = re.compile(r"(?:\b(?:not|no|never|will|going|gonna|should|might|maybe|if|when|can|could|would|"
                     r"where|did|does|do)\b|n't\b|'ll\b)", re.IGNORECASE)
_SENTENCE = re.compile(r'[^.!?]+[.!?]?')
# At most this many words between the pronoun and its preposition ("them right on the table").
_GAP = 4


def told_of(unit: MemoryUnit, own: Sequence[Claim], previous: Callable[[], MemoryUnit | None]) -> list[Claim]:
    """Claims of where the thing the previous unit of the episode placed last is, when ``unit``
    names it only by a pronoun (see the module); none otherwise. ``own``: ``unit``'s claims;
    ``previous`` is asked only when the unit may need it (a store read)."""
    if not unit.episode_id or any(c.attribute in (LOCATION, HOLDER) for c in own) \
            or not _PRONOUNS & set(text_words(unit.text)):
        return []  # no conversation, or the utterance placed something itself, or no pronoun
    place = _place_after_pronoun(unit)
    before = previous() if place else None
    if before is None or before.episode_id != unit.episode_id:
        return []
    placed = [c for c in claims_of(before) if c.attribute in (LOCATION, HOLDER) and c.source == 'text']
    if not placed or placed[-1].entity == place:
        return []
    return [Claim(placed[-1].entity, LOCATION, place, unit.stamp, unit.id, 'fallback', CONFIDENCE['fallback'],
                  unit.pose)]


def _place_after_pronoun(unit: MemoryUnit) -> str:
    """The thing a statement of ``unit`` names after "it/they/them" and a preposition of
    place, or '' (a question, a negation or a plan names none)."""
    names = [e.name for e in unit.entities if e.type != 'person']
    for sentence in _SENTENCE.findall(unit.text):
        if sentence.strip().endswith('?'):
            continue
        words = text_words(sentence)
        for i, word in enumerate(words):
            if word in _PRONOUNS and (place := _place_from(words, i, names)):
                return place
    return ''


def _place_from(words: list[str], i: int, names: list[str]) -> str:
    """The place named by the first preposition of place within a few words after ``i``."""
    for j in range(i + 1, min(len(words), i + 2 + _GAP)):
        if words[j] not in _PLACE_PREPS:
            continue
        k = j + 1
        while k < len(words) and words[k] in DETERMINERS:
            k += 1
        clause = ' '.join(words[max(0, i - 3):k])
        for name in names:
            target = name_words(name)
            if target and find_name(words[k:k + len(target)], target) == (0, len(target)) \
                    and not _NOT_SO.search(clause):
                return name
        return ''
    return ''
