"""Which words of a text name a place, and which the thing a sentence is about, without a parse.

"Put the broom on the stove in the kitchen" names the stove as a place something was put;
"clean the stove" and "I touched the stove while it was hot" name it as the thing acted on.
A robot's store holds hundreds of the first kind ("Put the X on the Y", "Moved the X to the
Y"), and BM25 counts their "stove" as much as the lesson's: a question about the stove as a
thing then finds every memory of things put on it. :class:`PlaceDiscount` lets a memory's
lexical evidence count such a word for less when the memory names it only as a place and the
question as a thing (docs/retrieval.md, "lexical").

A place is read as the words after a spatial preposition ("on", "in", "under", ...; "to" and
"from" only before a determiner, since "to" also starts a verb: "I want to paint the house"),
up to four words and through "of" ("on the top shelf of the fridge"), ending at a clause's
punctuation, a conjunction, a pronoun or a form of *be* or *have*; in a memory, only where the
clause has named a thing to put there (:func:`word_roles`). Time words and numbers ("on
Saturday", "in the morning", "in June 2023") are neither: they say when.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from brainmem_ros.encoders.cache import LruCache
from brainmem_ros.encoders.lexicon import time_word
from brainmem_ros.memory.lexicon import WORD
from brainmem_ros.memory.wordlists import word_list

_DETERMINERS = word_list('fact_words.txt', 'determiners')
# Where a thing is, and where it went or came from: "moved the cup to the sink",
# "took the pan off the stove".
_PREPOSITIONS = word_list('fact_words.txt', 'spatial prepositions') | frozenset({
    'from', 'to', 'toward', 'towards', 'upon', 'within', 'across', 'over', 'off', 'onto', 'out'})
# Also start a verb ("to paint") or a time ("from noon"): places only before a determiner.
_BEFORE_DETERMINER = frozenset({'to', 'from', 'out', 'over', 'off', 'by'})
# A place's words end at a new clause: a conjunction, a pronoun, a form of *be* or *have*
# or a modal ("the cup on the table is dirty", "on the shelf and the user took it").
_CLAUSE_WORDS = word_list('fact_words.txt', 'copulas') | frozenset({
    'and', 'but', 'or', 'nor', 'so', 'then', 'while', 'when', 'where', 'because', 'since', 'until',
    'after', 'before', 'if', 'unless', 'though', 'although', 'that', 'which', 'who', 'whom', 'whose',
    'as', 'i', 'you', 'he', 'she', 'it', 'we', 'they', 'me', 'him', 'us', 'them', 'be', 'been',
    'being', 'has', 'have', 'had', 'do', 'does', 'did', 'will', 'would', 'can', 'could', 'should',
    'may', 'might', 'must', 'shall', 'with', 'without', 'for', 'about', 'like', 'during'})
# Determiner, two modifiers and the head: "on the old wooden shelf".
_PLACE_WORDS = 4
_CLAUSES = re.compile(r'[,.;:!?()\[\]"]+')


@dataclass(frozen=True)
class WordRoles:
    """The lower-case words of a text named as things, and those named as places.

    A word can be both ("moved the box to the box room"); function words are in neither.
    """

    things: frozenset[str]
    places: frozenset[str]


@lru_cache(maxsize=65536)
def word_roles(text: str, *, holding: bool = True) -> WordRoles:
    """The words ``text`` names as places (after a spatial preposition) and as things.

    ``holding``: a place only where the clause named a thing before it, with a determiner
    ("put the broom on the stove", "the milk is on the shelf"). "We went to a pride parade" puts
    nothing there, and the parade is what it is about. A question is read without it: one that
    says where ("what is on the stove?") asks about a place.

    >>> r = word_roles('Put the broom on the stove in the kitchen.')
    >>> sorted(r.things), sorted(r.places)
    (['broom', 'put'], ['kitchen', 'stove'])
    >>> sorted(word_roles('I touched the stove while it was hot.').things)
    ['hot', 'stove', 'touched']
    >>> sorted(word_roles('The milk is on the top shelf of the fridge.').places)
    ['fridge', 'shelf', 'top']
    >>> word_roles('I want to paint the house.').places, word_roles('We went to a parade.').places
    (frozenset(), frozenset())
    >>> sorted(word_roles('what is on the stove?', holding=False).places)
    ['stove']
    """
    things: set[str] = set()
    places: set[str] = set()
    for clause in _CLAUSES.split(text.lower()):
        words = WORD.findall(clause)
        left = 0  # words of a place still to come
        held = not holding  # the clause named a thing that a place can hold
        for i, word in enumerate(words):
            if word in _PREPOSITIONS:
                determined = i + 1 < len(words) and words[i + 1] in _DETERMINERS
                if held and (determined or word not in _BEFORE_DETERMINER):
                    left = _PLACE_WORDS
                continue
            if word in _DETERMINERS and not left:
                held = True
            if word in _CLAUSE_WORDS or word[0].isdigit():
                left = 0  # a number ends a place too: "in room 214", "at 5 pm"
            elif word == 'of':
                left = _PLACE_WORDS if left else 0  # "the top shelf of the fridge"
            elif word in _DETERMINERS or time_word(word):
                left = max(0, left - 1)
            else:
                (places if left else things).add(word)
                left = max(0, left - 1)
    return WordRoles(frozenset(things), frozenset(places))


class PlaceDiscount:
    """A query's things, and how much lexical evidence a memory keeps that names them only as places.

    A memory keeps ``1 - share x (weight of the query's things it names only as places) / (weight
    of the query's words it names)``: the question's other words count in full, and a memory
    naming the thing as a thing (anywhere in it) keeps all of its evidence. A synonym the lexical
    search also looks for ("laundry basket" for "clothes hamper") is a thing when the words it
    stands for are, and weighs what it can count for there.
    """

    def __init__(self, terms_of: Callable[[Sequence[str]], list[frozenset[str]] | None],
                 parts: Sequence[str], idf: Mapping[str, float], share: float,
                 synonyms: Sequence[tuple[str, str, float]] = ()) -> None:
        """``parts``: the query's texts (question, goal, state); ``idf``: each query word the
        lexical search weighs, by its IDF; ``synonyms``: (synonym, the query words it stands
        for, its weight); ``terms_of``: the index's terms of each text."""
        self._terms_of = terms_of
        self._share = share
        roles = [word_roles(p, holding=False) for p in parts]
        things = frozenset().union(*(r.things for r in roles))
        phrases = [(w, weight, w in things) for w, weight in idf.items()]
        phrases += [(syn, weight, set(source.split()) <= things) for syn, source, weight in synonyms]
        terms = terms_of([p for p, _, _ in phrases]) if phrases and share > 0.0 else None
        self._phrases: list[tuple[frozenset[str], float, bool]] = []
        if terms is not None:
            self._phrases = [(t, weight, thing) for (_, weight, thing), t in zip(phrases, terms, strict=True)
                             if t]
        self.active = any(thing for _, _, thing in self._phrases)

    def factors(self, texts: Mapping[int, str]) -> dict[int, float]:
        """The share of its lexical evidence each memory (unit id: text) keeps, where below 1."""
        if not self.active:
            return {}
        held = _role_terms(texts.values(), self._terms_of)
        out: dict[int, float] = {}
        for uid, text in texts.items():
            if text not in held:
                continue  # a store that cannot tokenize
            named, every = held[text]
            weight = placed = 0.0
            for terms, w, thing in self._phrases:
                if terms <= every:
                    weight += w
                    if thing and not terms & named:
                        placed += w
            if placed > 0.0:
                out[uid] = 1.0 - self._share * placed / weight
        return out


# The index terms a text names as things, and all it names (by text): the same tokenizer
# (FTS5's porter unicode61) indexes every store, so a text's terms are the same in all. A
# Retrieve reads the roles of a hundred or more memories; read again each time, they were
# 1.4 ms of the calling thread's time per Retrieve on the 10k bench store.
_ROLE_TERMS: LruCache[str, tuple[frozenset[str], frozenset[str]]] = LruCache(65536)


def _role_terms(texts: Iterable[str], terms_of: Callable[[Sequence[str]], list[frozenset[str]] | None]
                ) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """(terms named as things, every term named) of each of ``texts`` (absent: not tokenized)."""
    out: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    todo: list[str] = []
    for text in dict.fromkeys(texts):
        known = _ROLE_TERMS.get(text)
        if known is None:
            todo.append(text)
        else:
            out[text] = known
    if not todo:
        return out
    roles = [word_roles(t) for t in todo]
    words = sorted(frozenset().union(*(r.things | r.places for r in roles)))
    found = terms_of(words)
    if found is None:
        return out
    term_of = dict(zip(words, found, strict=True))
    for text, r in zip(todo, roles, strict=True):
        named = _terms(r.things, term_of)
        out[text] = (named, named | _terms(r.places, term_of))
        _ROLE_TERMS.put(text, out[text])
    return out


def _terms(words: Iterable[str], term_of: Mapping[str, frozenset[str]]) -> frozenset[str]:
    return frozenset().union(*(term_of[w] for w in words))
