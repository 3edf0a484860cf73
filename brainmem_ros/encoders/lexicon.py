"""The package's versioned word lists, read from ``brainmem_ros/data``.

Language itself (tags, lemmas, the parse) comes from spaCy; what remains are a few
lists no parser can know: which words never name an entity (``stopwords.txt``, shared
with retrieval), the robot's own body (``self_parts.txt``), words for passing states
(``state_words.txt``), verbs that are not actions (``non_actions.txt``) and outcome cues
(``outcome_cues.tsv``). Each file says its version in its first comment line.

>>> 'the' in stopwords() and 'gripper' in self_parts()
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from brainmem_ros.errors import ConfigError
from brainmem_ros.memory.types import Outcome

DATA_DIR = Path(__file__).resolve().parent.parent / 'data'
STOPWORDS_PATH = DATA_DIR / 'stopwords.txt'


@dataclass(frozen=True)
class Cue:
    """An outcome cue: a lemma, optionally with its particle ("time out")."""

    lemma: str
    particle: str
    outcome: Outcome
    valence: float
    only_negated: bool = False  # "not detected": a failure only when negated
    verb_only: bool = False     # "a chip", "the fall" are no cue


_OUTCOMES = {'failure': (Outcome.FAILURE, False), 'success': (Outcome.SUCCESS, False),
             'negated-failure': (Outcome.FAILURE, True)}


def _lines(name: str) -> list[str]:
    path = DATA_DIR / name
    try:
        text = path.read_text(encoding='utf-8')
    except OSError as exc:
        msg = f'cannot read the word list {path}: {exc.strerror}; reinstall brainmem_ros'
        raise ConfigError(msg) from None
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith('#')]


@functools.cache
def stopwords() -> frozenset[str]:
    """Words that never name an entity on their own (lower case)."""
    return frozenset(_lines('stopwords.txt'))


@functools.cache
def units() -> frozenset[str]:
    """Units of measurement: the ``units`` section of ``stopwords.txt`` ("3 m" is no identifier)."""
    section = ''
    found: set[str] = set()
    for line in (DATA_DIR / 'stopwords.txt').read_text(encoding='utf-8').splitlines():
        if line.startswith('# --'):
            section = line[4:].strip()
        elif section == 'units' and line.strip() and not line.startswith('#'):
            found.add(line.strip())
    return frozenset(found)


@functools.cache
def self_parts() -> frozenset[str]:
    """The default self-vocabulary: the robot and its parts."""
    return frozenset(_lines('self_parts.txt'))


@functools.cache
def state_words() -> frozenset[str]:
    """Adjectives and participles of passing states (open, empty, chipped...)."""
    return frozenset(_lines('state_words.txt'))


@functools.cache
def non_actions() -> tuple[frozenset[str], frozenset[str]]:
    """Verb lemmas that are never actions, and aspectual ones (actions without a complement)."""
    never: set[str] = set()
    aspect: set[str] = set()
    for line in _lines('non_actions.txt'):
        lemma, _, mark = line.partition(' ')
        (aspect if mark == 'aspect' else never).add(lemma)
    return frozenset(never), frozenset(aspect)


@functools.cache
def outcome_cues() -> tuple[Cue, ...]:
    """Outcome cues by lemma (with particle for phrasal ones)."""
    cues = []
    for line in _lines('outcome_cues.tsv'):
        fields = line.split('\t')
        if len(fields) not in (3, 4) or fields[1] not in _OUTCOMES:
            msg = f'outcome_cues.tsv: expected lemma, outcome, valence[, VERB] in {line!r}'
            raise ConfigError(msg)
        words = fields[0].split()
        outcome, only_negated = _OUTCOMES[fields[1]]
        cues.append(Cue(words[0], ' '.join(words[1:]), outcome, float(fields[2]),
                        only_negated=only_negated, verb_only=fields[3:] == ['VERB']))
    return tuple(cues)
