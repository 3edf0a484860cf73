"""Base forms of verbs the lemmatizer leaves inflected ("unscrewed", "tore", "replanne")."""

from __future__ import annotations


def verb_base(word: str, verbs: frozenset[str], irregular: dict[str, list[str]]) -> str:
    """Base form of an inflected verb the lemmatizer missed ("unscrewed", "tore")."""
    word = word.lower()
    if word in irregular:
        return irregular[word][0]
    for suffix, repl in (('ied', 'y'), ('ed', ''), ('ed', 'e'), ('d', ''), ('ing', ''), ('ing', 'e'),
                         ('es', ''), ('s', '')):
        if word.endswith(suffix):
            base = word[:-len(suffix)] + repl
            if base in verbs:
                return base
            if len(base) > 2 and base[-1] == base[-2] and base[:-1] in verbs:
                return base[:-1]
    return ''


def undouble(lemma: str) -> str:
    """A lemma the lemmatizer left with a doubled consonant ("replanne" of "replanning")."""
    if lemma.endswith('e') and len(lemma) > 4 and lemma[-2] == lemma[-3] and lemma[-2] not in 'aeioulsz':
        return lemma[:-2]
    if len(lemma) > 4 and lemma[-1] == lemma[-2] and lemma[-1] not in 'aeioulsz':
        return lemma[:-1]
    return lemma
