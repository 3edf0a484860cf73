"""Names the small parser breaks, mended right after parsing (with the rest of
:mod:`~brainmem_ros.encoders.parse_repair`).

A household noun read as a verb after the noun it ends ("the bathroom light"), a state word
before a name read as one of its nouns ("an unmade bed"), "can" read as a modal after a noun
("a paint can on a shelf"): every reader would see a thing no one names, or no thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import NOUN_TYPES, state_words

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token


def adopt_left(old: Token, new: Token) -> None:
    """``old``'s words before ``new`` hang on ``new``: "a red" are the helmet's, not "lying"'s."""
    for child in list(old.children):
        if child.i < new.i:
            child.head = new


def mend_names(doc: Doc) -> None:
    """"turned off the bathroom fan and the bathroom light once ...": "light" read as a verb
    with no subject or object of its own, after "the bathroom"; it is the head of the name."""
    for tok in doc:
        prev = doc[tok.i - 1] if tok.i else tok
        if tok.pos_ != 'VERB' or NOUN_TYPES.get(tok.lower_) is None or prev.pos_ != 'NOUN' \
                or prev.dep_ not in {'conj', 'dobj', 'pobj'} or tok.dep_ not in {'advcl', 'conj', 'dep'} \
                or not any(c.dep_ == 'det' for c in prev.children) \
                or any(c.dep_ in {'nsubj', 'dobj', 'prt'} for c in tok.children):
            continue
        for child in list(prev.children):
            child.head = tok
        tok.head, tok.dep_ = (tok, 'ROOT') if prev.head.i == prev.i else (prev.head, prev.dep_)
        prev.head, prev.dep_ = tok, 'compound'
        tok.pos_, tok.tag_, tok.lemma_ = 'NOUN', 'NN', tok.lower_


def mend_states(doc: Doc) -> None:
    """"an unmade bed", "an open garage door": a state word before a name read as a noun of the
    name ("unmade bed", a thing no one names) or as a state of the name's first word (an open
    garage); it is the state of the thing the name heads."""
    states = state_words()
    for tok in doc:
        head = tok.head
        if tok.lower_ not in states or head.i <= tok.i or head.pos_ not in {'NOUN', 'PROPN'}:
            continue
        participle = tok.lower_.endswith('ed') or tok.lower_.startswith('un')  # (not "light switch")
        if tok.pos_ == 'NOUN' and tok.dep_ == 'compound' and participle:
            tok.pos_, tok.tag_, tok.dep_ = 'ADJ', 'JJ', 'amod'
        if tok.dep_ == 'amod' and head.dep_ == 'compound' and head.head.i > head.i \
                and head.head.pos_ in {'NOUN', 'PROPN'}:
            tok.head = head.head


def mend_cans(doc: Doc) -> None:
    """"a paint can on a shelf": "can" read as a modal after a noun with an article, no verb after."""
    for can in doc[2:]:
        name, nxt = doc[can.i - 1], doc[can.i + 1] if can.i + 1 < len(doc) else None
        if can.lower_ != 'can' or can.tag_ != 'MD' or name.pos_ != 'NOUN' or (nxt and nxt.tag_ == 'VB') \
                or not any(c.dep_ == 'det' for c in name.children):
            continue
        if not can.is_ancestor(name):  # (else the name hangs under the can already: no cycle)
            for child in list(can.children):  # "and set it down": the verb's conjunct, not the can's
                child.head = name.head if child.pos_ in {'VERB', 'CCONJ'} and name.head.i != name.i else can
            can.dep_, can.head = name.dep_, (can if name.head.i == name.i else name.head)
        adopt_left(name, can)
        name.dep_, name.head, can.pos_ = 'compound', can, 'NOUN'  # (tagged MD: a word no measure)
