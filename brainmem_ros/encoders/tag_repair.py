"""Tokens the small tagger gets wrong in telegraphic text.

Telegraphic robot text ("Hung the coat on the rack", "dish rack empty", "to room 204")
is not what the tagger was trained on; :func:`repairs` says, by the shape of the clause,
which tokens are really verbs and which really nouns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import NOUN_TYPES
from brainmem_ros.encoders.reading_base import CODE, NOMINAL
from brainmem_ros.encoders.verb_forms import verb_base

if TYPE_CHECKING:
    from spacy.tokens import Doc

# English personal, possessive and reflexive pronouns: a closed class.
_PRONOUNS = frozenset({
    'i', 'me', 'my', 'mine', 'myself', 'you', 'your', 'yours', 'yourself', 'yourselves', 'he', 'him', 'his',
    'himself', 'she', 'her', 'hers', 'herself', 'it', 'its', 'itself', 'we', 'us', 'our', 'ours', 'ourselves',
    'they', 'them', 'their', 'theirs', 'themselves', 'one', 'oneself', 'thee', 'thou', 'thy', 'em'})


def repairs(doc: Doc, verbs: frozenset[str], irregular: dict[str, list[str]],
             states: frozenset[str]) -> tuple[set[int], set[int]]:
    """Tokens the small tagger gets wrong in telegraphic text, by the shape of the clause.

    A capitalised past form of a verb opening a sentence before a determiner is that verb
    ("Hung the coat on the rack"). A "noun" in -s after a noun phrase and before a
    preposition or the end, in a clause with no verb (or not its object), is the predicate
    ("a drone hovers above the roof"). A base-form "verb" followed by a number, or right
    after a bare noun, or after a colon or comma and before a bare noun, is a noun ("to
    room 204", "dish rack empty", "Detection: fire extinguisher").
    """
    as_verb: set[int] = set()
    as_noun: set[int] = set()
    for sent in doc.sents:
        # (A copula that heads the clause is its verb: "the remote is behind the sofa cushions".)
        has_verb = any(t.pos_ == 'VERB' or (t.pos_ == 'AUX' and t.dep_ == 'ROOT') for t in sent)
        first = sent[0]
        if (first.tag_ == 'NNP' and len(sent) > 2 and (sent[1].pos_ == 'DET' or sent[1].tag_ == 'RP')
                and first.lower_ not in verbs and verb_base(first.lower_, verbs, irregular)):
            as_verb.add(first.i)  # "Hung the coat": a past form opening an order-less log line
        for tok in sent:
            prev = tok.nbor(-1) if tok.i > sent.start else None
            nxt = tok.nbor(1) if tok.i + 1 < sent.end else None
            past = tok.lower_ in irregular or (tok.lower_.endswith('ed') and tok.lower_[:-2] in verbs)
            if (tok.pos_ == 'NOUN' and ((tok.tag_ in {'NNS', 'VBZ'} and tok.lower_.endswith('s')
                                         and tok.lemma_.lower() in verbs) or past)
                    and prev is not None and not (has_verb and tok.dep_ in {'dobj', 'pobj'})
                    and not (tok.dep_ == 'pobj' and tok.head.lower_ == 'of')  # "a set of car keys on"
                    # (nor the subject after its verb: "Where are the car keys?")
                    and not (tok.dep_ in {'nsubj', 'nsubjpass'} and tok.head.i < tok.i
                             and tok.head.pos_ in {'AUX', 'VERB'})
                    and first.i not in as_verb  # the opening verb is the predicate
                    and prev.pos_ in NOMINAL and (nxt is None or nxt.pos_ in {'ADP', 'PUNCT', 'ADV'})
                    and (not has_verb or prev.pos_ == 'PROPN'
                         or any(c.dep_ == 'det' for c in prev.children)
                         or (prev.i > sent.start and prev.nbor(-1).pos_ == 'DET'))):
                as_verb.add(tok.i)
            elif tok.tag_ in {'VB', 'VBP'} and nxt is not None and not any(
                    c.dep_ in {'dobj', 'prt'} and c.pos_ in {'PRON', 'DET', 'ADP'} for c in tok.children):
                after_bare_noun = prev is not None and prev.pos_ in NOMINAL and not any(
                    c.dep_ == 'det' for c in prev.children) and prev.i == sent.start
                listed = (prev is None or prev.text in {':', ',', ';'}) and nxt.pos_ in NOMINAL \
                    and nxt.i + 1 < sent.end and nxt.nbor(1).pos_ in {'ADP', 'PUNCT', 'NUM'}
                if CODE.match(nxt.text) or after_bare_noun or listed or nxt.lower_ in states:
                    as_noun.add(tok.i)
            if tok.tag_ in {'VB', 'VBP'} and (tok.dep_ in {'dobj', 'pobj'} or (
                    tok.tag_ == 'VBP' and prev is not None and prev.tag_ == 'NN'
                    and prev.dep_ == 'nsubj' and prev.head.i == tok.i)):
                # "on the coat rack", "the umbrella stand in the hall": a base-form verb
                # is never an object, nor agrees with a singular subject.
                as_noun.add(tok.i)
            elif tok.tag_ == 'MD' and nxt is not None and nxt.tag_ in {'VBZ', 'VBD'}:
                as_noun.add(tok.i)  # "the watering can is": a modal takes a base form
            elif tok.tag_ in {'PRP', 'PRP$'} and tok.is_alpha and tok.lower_ not in _PRONOUNS:
                as_noun.add(tok.i)  # "the living room bookshelf": the tagger's "-self" is no pronoun
            elif tok.tag_ == 'VBG' and nxt is not None and nxt.pos_ in NOMINAL \
                    and f'{tok.lower_} {nxt.lemma_.lower()}' in NOUN_TYPES:
                as_noun.add(tok.i)  # "the kitchen recycling bin": a household name, not "recycling a bin"
    return as_verb, as_noun
