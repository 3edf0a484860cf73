"""Words of the same meaning, so that a question finds a memory worded otherwise.

The encoder places "reading glasses" and "the spectacles" less close than a month of
routine memories that repeat the question's other words, and BM25 sees no shared word at
all; a user and a caption rarely choose the same word for a thing. The groups are
WordNet's (``data/synonyms.txt``, built by ``bench/wordnet_synonyms.py``), where a word
belongs to a group only through its most frequent sense, so that a question's word is
replaced only by what it usually means. A verb of the question also finds the instruments
named after it ("clean the floor": "the vacuum cleaner"; "charge the vacuum": "the vacuum
charger"): a planner states the act, the memory the thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources

from brainmem_ros.memory.lexicon import WORD, query_stopwords


@cache
def groups(pos: str) -> tuple[tuple[str, ...], ...]:
    """The synonym groups of one part of speech ('n' or 'v') in ``data/synonyms.txt``, or with
    'i' its verbs and their instruments."""
    text = resources.files('brainmem_ros').joinpath('data', 'synonyms.txt').read_text(encoding='utf-8')
    out: list[tuple[str, ...]] = []
    for raw in text.splitlines():
        tag, _, rest = raw.partition(' ')
        if tag == pos:
            out.append(tuple(w.strip() for w in rest.split('|') if w.strip()))
    return tuple(out)


@cache
def _table(pos: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, set[str]] = {}
    for group in groups(pos):
        for w in group:
            out.setdefault(w, set()).update(g for g in group if g != w)
    if pos == 'v':
        # A verb also finds its instruments ("charge the vacuum": the charger), not the
        # other way round: a question about the charger is not about charging.
        for verb, *tools in groups('i'):
            out.setdefault(verb, set()).update(tools)
    return {w: tuple(sorted(s)) for w, s in out.items()}


# Endings taken off a word to find its entry: a plural among the nouns, a verb's among
# the verbs ("standing" is not a stand).
_ENDINGS = (('n', 'ies', 'y'), ('n', 'es', ''), ('n', 's', ''), ('v', 'ed', ''), ('v', 'ed', 'e'),
            ('v', 'ing', ''), ('v', 'ing', 'e'), ('v', 'es', ''), ('v', 's', ''))


def synonyms_of(word: str) -> tuple[str, ...]:
    """The synonyms of ``word`` (a word or a name of words), as written or without an ending."""
    found = [*_table('n').get(word, ()), *_table('v').get(word, ())]
    if not found:
        for pos, ending, repl in _ENDINGS:
            stem = word[:-len(ending)] + repl
            if word.endswith(ending) and stem in _table(pos):
                found = list(_table(pos)[stem])
                break
    return tuple(dict.fromkeys(found))


def alternatives(text: str) -> dict[str, tuple[str, ...]]:
    """Each word or two-word name of ``text`` that has synonyms -> its synonyms."""
    stop = query_stopwords()
    words = [w.lower() for w in WORD.findall(text)]
    out: dict[str, tuple[str, ...]] = {}
    covered: set[int] = set()
    for i in range(len(words) - 1):
        if words[i] in stop:
            continue
        pair = f'{words[i]} {words[i + 1]}'
        found = synonyms_of(pair)
        if found:
            out[pair] = found
            covered.update((i, i + 1))
    for i, w in enumerate(words):
        if i in covered or w in stop or len(w) < 3:
            continue
        found = synonyms_of(w)
        if found:
            out[w] = found
    return out


# Each synonym is one more phrase of the lexical search (and one more scan of its matches).
MAX_PHRASES = 12


def synonym_phrases(text: str, known: Sequence[str]) -> list[tuple[str, str]]:
    """(synonym, the query word it stands for) for ``text``, synonyms not already in ``known``,
    at most :data:`MAX_PHRASES`."""
    alts = alternatives(text)
    seen = set(known)
    out: list[tuple[str, str]] = []
    for source, syns in alts.items():
        for s in syns:
            if s not in seen:
                seen.add(s)
                out.append((s, source))
    return out[:MAX_PHRASES]
