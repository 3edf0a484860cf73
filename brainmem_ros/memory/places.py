"""Where a text says a thing is, without a parse: the fact layer's own reading of places.

:func:`fallback_locations` reads "X is [one word] <preposition> Y" when the extractor gave
X no place; :func:`nested_places` reads where a place itself is ("on the bench on the front
porch": the bench is on the porch). Both only between entities the extractor found.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from brainmem_ros.encoders.lexicon import time_word
from brainmem_ros.encoders.reading_base import HELD
from brainmem_ros.memory.entity_names import DETERMINERS, entity_key, find_name, name_words, text_words
from brainmem_ros.memory.types import Entity
from brainmem_ros.memory.wordlists import word_list

_COPULAS = word_list('fact_words.txt', 'copulas')
_NEGATIONS = word_list('fact_words.txt', 'negations')
_SPATIAL = word_list('fact_words.txt', 'spatial prepositions')
#: Where a thing the robot took is: the robot holds it, as a person holds what they took.
ROBOT = 'robot'
# Prepositions that put a place inside or on a larger one ("the wall in the garage"); not
# "above" or "by", which name a neighbour.
_WITHIN = frozenset({'in', 'inside', 'on', 'at'})


def held_by(value: str) -> str:
    """A place value as the facts file it: the extractors' ``held`` (the robot took the thing:
    "I picked up the keys", "grasp OK object=cup") names the robot, the holder a planner asks
    where the thing is ("where is the stapler?" - "robot"), as "Maria took the keys" names
    Maria. Every other value is kept.

    >>> held_by('held'), held_by('kitchen table')
    ('robot', 'kitchen table')
    """
    return ROBOT if value == HELD else value


def _spans(words: list[str], entities: Sequence[Entity]) -> list[tuple[int, int, str]]:
    """(start, end, name) of each entity's first mention in ``words``, in text order."""
    spans = []
    for entity in entities:
        span = find_name(words, name_words(entity.name))
        if span is not None:
            spans.append((span[0], span[1], entity.name))
    return sorted(spans)


# Words before a clause that make it a wish or a condition, not a place it states ("she wished
# the batteries were kept in her sewing box", "if the keys are in the car").
_UNREAL = frozenset({'wish', 'wished', 'wishes', 'hope', 'hoped', 'hopes', 'if', 'unless', 'whether'})


def fallback_locations(text: str, entities: Sequence[Entity]) -> list[tuple[str, str]]:
    """``(entity, place)`` for "X is [one verb-ing word] <spatial preposition> [the] Y".

    Parse-free and deliberately narrow: X and Y must both be entities the extractor
    found, in this order, with a form of *be* right after X and at most one word
    (a participle: "leaning", "sitting", "still"; never a negation) between it and the
    preposition.

    >>> fallback_locations('The blue umbrella is leaning against the coat rack.',
    ...                    [Entity('blue umbrella'), Entity('coat rack')])
    [('blue umbrella', 'coat rack')]
    >>> fallback_locations('The blue umbrella is not in the hallway.',
    ...                    [Entity('blue umbrella'), Entity('hallway')])
    []
    >>> fallback_locations('I wish the blue umbrella was in the hallway.',
    ...                    [Entity('blue umbrella'), Entity('hallway')])
    []
    """
    words = text_words(text)
    spans = _spans(words, entities)
    found: list[tuple[str, str]] = []
    for start, end, name in spans:
        k = end
        if k >= len(words) or words[k] not in _COPULAS or _UNREAL & set(words[:start]):
            continue
        k += 1
        if k < len(words) and words[k] in _NEGATIONS:
            continue
        if k < len(words) and words[k] not in _SPATIAL:
            k += 1  # one participle or adverb
        if k >= len(words) or words[k] not in _SPATIAL:
            continue
        after = [s for s in spans if s[0] > k and all(w in DETERMINERS for w in words[k + 1:s[0]])]
        # (Not a date: "the party is on Saturday night", "the appointment is on the 5th".)
        if after and after[0][2] != name and not any(time_word(w) for w in words[after[0][0]:after[0][1]]):
            found.append((name, after[0][2]))
    return found


def nested_places(text: str, entities: Sequence[Entity], places: Sequence[str], *,
                  placed: Collection[str] = ()) -> list[tuple[str, str]]:
    """``(place, larger place)`` for each of ``places`` that ``text`` puts in or on another
    entity right after naming it: "a red backpack on a bench on a front porch" -> (bench,
    front porch); "the shelf in the hallway above the shoe rack" -> (shelf, hallway). Not for
    a place whose key is in ``placed`` (the text placed it already).

    >>> nested_places('a black umbrella leaning against a wall in a garage',
    ...               [Entity('black umbrella'), Entity('wall'), Entity('garage')], ['wall'])
    [('wall', 'garage')]
    """
    words = text_words(text)
    spans = _spans(words, entities)
    found: list[tuple[str, str]] = []
    for _start, end, name in spans:
        if name not in places or entity_key(name) in placed or end >= len(words) or words[end] not in _WITHIN:
            continue
        after = [s for s in spans if s[0] > end and all(w in DETERMINERS for w in words[end + 1:s[0]])]
        if after and after[0][2] != name:
            found.append((name, after[0][2]))
    return found
