"""The things a parse names: mention spans, their heads and words, the robot itself left out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import (
    NOUN_TYPES,
    units,
)
from brainmem_ros.encoders.reading_actions import ActionReading
from brainmem_ros.encoders.reading_base import (
    LEFT_MODIFIERS,
    NOMINAL,
    SNAKE,
    determined,
    is_code,
    sided,
)
from brainmem_ros.memory.types import Entity, normalise_name

if TYPE_CHECKING:
    from spacy.tokens import Token


# Parts a person has as the robot does: "Ana: the ball is in my hand" is hers (the places layer).
_BODY = frozenset({'hand', 'arm', 'finger', 'head', 'leg', 'foot', 'eye'})


#: Records of things to do or get: a thing themselves ("the shopping list is on the fridge"), never
#: where another thing is ("added milk to the shopping list").
WRITTEN = frozenset({'list', 'checklist', 'schedule', 'agenda', 'reminder', 'playlist'})

# Marks of a record's fields, which no name of a thing has.
_MARKED = re.compile(r'[=|"{}<>\[\]]')


class EntityReading(ActionReading):
    """The things a parse names (a layer of a parse reading)."""

    def entity_spans(self) -> list[tuple[int, int, int]]:
        """(start, end, head) token positions of each mention of a thing."""
        if self._spans is None:
            self._spans = self._entity_spans()
        return self._spans

    def _entity_spans(self) -> list[tuple[int, int, int]]:
        spans: list[tuple[int, int, int]] = []
        for tok in self.doc:
            if tok.i in self.skip or tok.i in self.camel_actions or not self._is_head(tok):
                continue
            start = tok.i
            while start > 0 and self._keeps_left(self.doc[start - 1], tok):
                start -= 1
            end = tok.i + 1
            if end < len(self.doc) and is_code(self.doc, end, self.as_noun):
                end += 1
            spans.append((start, end, tok.i))
        return spans

    def _is_head(self, tok: Token) -> bool:
        if SNAKE.match(tok.text):
            return not self._is_self(tok.text.lower()) and not self._snake_action(tok)
        if not self._nominal(tok) or tok.i in self.as_verb:
            return False
        nxt = tok.nbor(1) if tok.i + 1 < len(self.doc) else None
        if nxt is not None and self._written(nxt):
            return False  # "the shopping list": one thing, named by both words
        if nxt is not None and self._numbered(nxt):
            return False  # "the dock 2 door": the door's name
        if nxt is not None and self._abstract(nxt) and not (
                nxt.i + 1 < len(self.doc) and self._nominal(nxt.nbor(1))):
            pass  # "fridge temperature": a measure of the fridge, which is the thing
        elif tok.dep_ == 'compound' and tok.head.i > tok.i and tok.head.pos_ in NOMINAL | {'NUM'}:
            return False  # part of the noun after it
        elif nxt is not None and self._nominal(nxt) and nxt.i not in self.as_verb \
                and not nxt.text.isupper() and nxt.i not in self.camel_actions:
            return False  # "coat stand" even when the parser attaches them apart
        if tok.text.isupper() and len(tok.text) > 1 and tok.dep_ != 'compound' and not determined(tok):
            return False  # a bare acronym names software (AMCL, YOLO), not a thing; "the TV" is one
        if tok.dep_ == 'pobj' and tok.head.lower_ in {'in', 'on', 'at'} and not determined(tok) \
                and any(c.dep_ == 'prep' and c.lower_ == 'of' for c in tok.children):
            return False  # "in front of", "on top of": a preposition of several words
        if (is_code(self.doc, tok.i, self.as_noun) and tok.i > 0
                and self._keeps_left(self.doc[tok.i - 1], tok)):
            return True  # "corridor B": the code is the head
        word = tok.lower_.rstrip('.')
        can = word == 'can' and tok.pos_ == 'NOUN' and tok.i > 0 and self._nominal(tok.nbor(-1))
        can = can or self._written(tok)  # "the shopping list" (not "a list of jobs")
        if ((word in self.stop or tok.lemma_.lower() in self.stop) and tok.tag_ != 'MD' and not can
                and not sided(tok)) \
                or not any(c.isalpha() for c in word):
            # A "modal" here is a noun by repairs ("the watering can is"), and so is "can" the
            # tagger calls a noun after one ("emptied the trash can").
            return False
        if '=' in word or (word in self.states and any(c.dep_ == 'nsubj' for c in tok.children)):
            return False  # "y=-3.1": a reading; "freezer door ajar": a state of the door
        return not self._gerund_action(tok) and not self._skill_action(tok)

    def _abstract(self, tok: Token) -> bool:
        """A noun for a measure, state or activity of a thing, not a thing ("temperature")."""
        return (self._nominal(tok) and not is_code(self.doc, tok.i, self.as_noun)
                and not self._written(tok)
                and tok.tag_ != 'MD' and (tok.lower_ in self.stop or tok.lemma_.lower() in self.stop)
                and tok.lower_ not in units())

    def _written(self, tok: Token) -> bool:
        """A record of things to get or do, named by the noun before it ("the shopping list")."""
        return tok.lemma_.lower() in WRITTEN and tok.i > 0 and self._nominal(tok.nbor(-1))

    def _nominal(self, tok: Token) -> bool:
        return (tok.pos_ in NOMINAL or tok.i in self.as_noun) and tok.i not in self.as_verb

    def _numbered(self, code: Token) -> bool:
        """A code between two nouns that names which of the second it is ("dock 2 door")."""
        after = code.i + 1
        return after < len(self.doc) and code.head.i == after and self.doc[after].pos_ == 'NOUN' \
            and is_code(self.doc, code.i, self.as_noun) and self.doc[code.i - 1].head.i == after

    def _keeps_left(self, left: Token, head: Token) -> bool:
        if left.i in self.skip or left.i in self.as_verb or SNAKE.match(head.text):
            return False
        if left.i + 1 == head.i and self._numbered(left):
            return True
        if (self._nominal(left) and left.i + 1 == head.i) or (
                self._nominal(left) and self._nominal(left.nbor(1)) and left.nbor(1).i < head.i):
            return not self._is_head_blocker(left)
        if left.i in self.skip or not (head.i > left.i) or (left.is_punct and left.text != '-'):
            return False
        if left.text == '-':
            return left.i > 0 and left.nbor(1).i <= head.i
        anchor = left.head
        if anchor.i <= left.i or anchor.i > head.i:
            if not (left.nbor(1).text == '-' and left.nbor(2).i <= head.i):
                return False
        if left.dep_ not in LEFT_MODIFIERS and not (left.pos_ in NOMINAL and left.dep_ == 'dep'):
            return left.text.endswith('-') or (left.i + 1 < len(self.doc)
                                               and self.doc[left.i + 1].text == '-')
        word = left.lower_
        if word in self.states or (left.tag_ == 'VBN') or left.pos_ in {'DET', 'NUM', 'PRON'}:
            return False
        return not (word in self.stop and left.pos_ not in NOMINAL)

    def _is_head_blocker(self, left: Token) -> bool:
        return left.lower_ in self.stop and left.pos_ not in NOMINAL

    def entities(self, known_entities: Sequence[str]) -> tuple[Entity, ...]:
        """The things the parse names (``known_entities`` as the caller names them)."""
        found: dict[str, Entity] = {}
        for start, end, head in self.entity_spans():
            words = [self._word(self.doc[i], i == head) for i in range(start, end)]
            name = ' '.join(w for w in words if w).replace(' - ', '-')
            if not name or _MARKED.search(name) or self._is_other_self(name, start, head):
                continue  # (nor a span across a record's marks: "level = info svc", 'ts":"2024')
            kind = 'place' if any(c.isdigit() for c in name) or '_' in name else (
                'person' if all(self.doc[i].pos_ == 'PROPN' for i in range(start, head + 1))
                and not any(c.isdigit() for c in name) else 'object')
            found.setdefault(normalise_name(name), Entity(name=normalise_name(name), type=kind))
        low = self.doc.text.lower()
        for known in known_entities:
            key = normalise_name(known)
            if key and key not in found and re.search(rf'\b{re.escape(key)}\b', low):
                found[key] = Entity(name=key)
        return tuple(found.values())

    def _is_other_self(self, name: str, start: int, head: int) -> bool:
        head_tok = self.doc[head]
        if head_tok.lower_ == 'robot' or head_tok.lemma_.lower() == 'robot':
            return start == head or self.doc[head - 1].lower_ in {'the', 'this', 'my'}
        tag = self.speaker_colon()
        if tag and not any(t.lower_ in self.self_vocab or t.lower_ in NOUN_TYPES for t in self.doc[:tag]) \
                and head_tok.lemma_.lower() not in _BODY \
                and not any(t.lemma_.lower() == 'robot' for t in self.doc[:start]):
            return False  # a person speaking: "Jake: I put the spare batteries in the drawer"
        # (The head's lemma too: "sensors"; with its modifiers: "television screen" is no part
        # of the robot.)
        lemma = ' '.join([*name.lower().split()[:-1], head_tok.lemma_.lower()])
        if head_tok.tag_ in {'NNS', 'NNPS'} and head_tok.lower_ not in self.self_vocab \
                and not any(c.lower_ in {'my', 'our'} for c in head_tok.children):
            return False  # "the spare batteries": the robot has one battery (its plurals are listed)
        return self._is_self(name.lower()) or self._is_self(lemma)

    def _word(self, tok: Token, is_head: bool) -> str:
        if is_head and tok.tag_ in {'NNS', 'NNPS'}:
            lemma = tok.lemma_.lower()
            # "thermos" is a noun, not the plural of an unknown "thermo"
            return tok.lower_ if lemma not in self.nouns and tok.lower_ in self.nouns else lemma
        return tok.lower_
