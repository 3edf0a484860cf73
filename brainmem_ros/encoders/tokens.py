"""Word tokens with character offsets, shared by the rule extractor and grounding."""

from __future__ import annotations

import re
from dataclasses import dataclass

from brainmem_ros.encoders.lexicon import NON_ACTION_VERBS, VERB_FORMS, singular

_TOKEN = re.compile(r"[A-Za-z]+(?:[-'][A-Za-z]+)*'?|\d+(?:[.,]\d+)?%?|[.!?;:,()\"]")
_SENTENCE_END = frozenset('.!?;:')
_NEGATED_MODALS = {'ca': 'can', 'wo': 'will', 'sha': 'shall'}


@dataclass(frozen=True)
class Token:
    """One word (or punctuation mark) of a text and where it sits in it."""

    text: str
    low: str
    start: int
    end: int

    @property
    def is_word(self) -> bool:
        """True for words (letters, including "n't"), false for numbers, clitics, punctuation."""
        return self.low[:1].isalpha()

    @property
    def is_capitalised(self) -> bool:
        """Starts with an upper-case letter."""
        return self.text[:1].isupper()


def _split_clitic(word: str, start: int) -> list[Token]:
    low = word.lower()
    if low.endswith("n't") and len(low) > 3:
        base = low[:-3]
        base = _NEGATED_MODALS.get(base, base)
        cut = len(word) - 3
        return [Token(word[:cut], base, start, start + cut),
                Token(word[cut:], "n't", start + cut, start + len(word))]
    for clitic in ("'s", "'re", "'m", "'ll", "'ve", "'d"):
        if low.endswith(clitic) and len(low) > len(clitic):
            cut = len(word) - len(clitic)
            return [Token(word[:cut], low[:cut], start, start + cut),
                    Token(word[cut:], clitic, start + cut, start + len(word))]
    if low.endswith("'"):
        # Plural possessive ("the kids' room"): the word without its apostrophe.
        return [Token(word[:-1], low[:-1], start, start + len(word) - 1)]
    return [Token(word, low, start, start + len(word))]


def tokenize(text: str) -> tuple[Token, ...]:
    """Split ``text`` into word, number and punctuation tokens (clitics split off)."""
    normalised = text.replace('\u2019', "'").replace('\u2018', "'")
    tokens: list[Token] = []
    for match in _TOKEN.finditer(normalised):
        tokens.extend(_split_clitic(match.group(), match.start()))
    return tuple(tokens)


def is_boundary(token: Token) -> bool:
    """True for sentence-ending punctuation."""
    return token.low in _SENTENCE_END


def word_keys(text: str) -> tuple[str, ...]:
    """Lower-case words of ``text`` with plural nouns made singular, in order."""
    return tuple(singular(t.low) for t in tokenize(text) if t.is_word)


def verb_lemmas(word: str) -> frozenset[str]:
    """Every lemma ``word`` may be a form of: table look-up plus suffix stripping.

    Stripping covers verbs that are not in the vocabulary ("wobbled" -> wobble),
    so grounding can accept an LLM's lemma for any verb that is in the text.
    """
    low = word.lower()
    found = {low}
    if low in VERB_FORMS:
        found.add(VERB_FORMS[low])
    if low in NON_ACTION_VERBS:
        return frozenset(found)
    for suffix in ('ing', 'ed', 'es', 's', 'd'):
        if low.endswith(suffix) and len(low) - len(suffix) >= 2:
            stem = low[:-len(suffix)]
            found.update({stem, stem + 'e'})
            if len(stem) > 2 and stem[-1] == stem[-2]:
                found.add(stem[:-1])
            if stem.endswith('i'):
                found.add(stem[:-1] + 'y')
    return frozenset(found)
