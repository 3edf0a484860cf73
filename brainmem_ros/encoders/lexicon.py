"""The package's versioned word lists, read from ``brainmem_ros/data``.

Language itself (tags, lemmas, the parse) comes from spaCy; what remains are a few
lists no parser can know: which words never name an entity (``stopwords.txt``, shared
with retrieval), the robot's own body (``self_parts.txt``), words for passing states
(``state_words.txt``), verbs whose on/off particle sets power (``switch_verbs.txt``), verbs
that are not actions (``non_actions.txt``) and outcome cues (``outcome_cues.tsv``). Each
file says its version in its first comment line. The older rule extractor's nouns, verbs
and regex cues are data too (``rule_vocabulary.txt``), with the small functions that
derive inflected forms from them.

>>> 'the' in stopwords() and 'gripper' in self_parts()
True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
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
def switch_verbs() -> frozenset[str]:
    """Verb lemmas whose particle "on"/"off" is the power of their object ("turned off the lamp")."""
    return frozenset(_lines('switch_verbs.txt'))


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


# -- the older rule extractor's vocabulary (rule_vocabulary.txt) -----------------------


@functools.cache
def _sections(name: str) -> dict[str, list[str]]:
    """Entries of a sectioned data file ('# -- section' headers), in file order."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (DATA_DIR / name).read_text(encoding='utf-8').splitlines():
        if line.startswith('# --'):
            current = sections.setdefault(line[4:].strip(), [])
        elif line.strip() and not line.startswith('#') and current is not None:
            current.append(line)
    return sections


def _rule_list(section: str) -> list[str]:
    try:
        return [e.strip() for e in _sections('rule_vocabulary.txt')[section]]
    except KeyError:
        msg = f'rule_vocabulary.txt has no section {section!r}; reinstall brainmem_ros'
        raise ConfigError(msg) from None


def _rule_pairs(section: str) -> list[tuple[str, str]]:
    return [(key.strip(), value.strip()) for key, _, value in
            (e.partition('\t') for e in _sections('rule_vocabulary.txt')[section])]


_NOUN_KINDS = ('place', 'furniture', 'appliance', 'tool', 'food', 'object', 'person', 'animal')

#: normalised noun (single or multi-word) -> entity type
NOUN_TYPES: dict[str, str] = {noun: kind for kind in _NOUN_KINDS for noun in _rule_list(f'nouns {kind}')}
#: Common first names; other names are found by capitalisation (see rules.py).
PERSON_NAMES = frozenset(_rule_list('person_names'))
#: Words kept in an entity's name when they precede its noun ("red cup", "top shelf").
MODIFIERS = frozenset(_rule_list('modifiers'))
COMPOUND_MODIFIERS = frozenset(_rule_list('compound_modifiers'))
PARTS = frozenset(_rule_list('parts'))
PART_OWNER_TYPES = frozenset(_rule_list('part_owner_types'))
NOT_ENTITIES = frozenset(_rule_list('not_entities'))
#: Places inside or on a thing that are places of their own: "the drawer of the desk" is the
#: desk drawer (a corner of the desk is the desk).
COMPARTMENTS = frozenset({'drawer', 'shelf', 'compartment', 'pocket', 'door', 'rack', 'tray', 'basket'})
#: Robot-relevant verbs in base form (regular inflections derived by ``verb_forms``).
VERBS = frozenset(_rule_list('verbs'))
NON_ACTION_VERBS = frozenset(_rule_list('non_action_verbs'))
STATE_WORDS = frozenset(_rule_list('state_words'))
#: States that ``<verb> the X`` leaves X in ("opened the fridge" -> fridge: open).
VERB_RESULT_STATES: dict[str, str] = dict(_rule_pairs('verb_result_states'))
PLACING_VERBS = frozenset(_rule_list('placing_verbs'))


@functools.cache
def participle_states() -> dict[str, str]:
    """State words that are a verb's participle, and the state the verb leaves: "opened" is
    open, "filled" full, "shut" closed (one value for a state however it is said)."""
    words = state_words()
    out: dict[str, str] = {}
    for verb, state in VERB_RESULT_STATES.items():
        for form in (f'{verb}ed', f'{verb}d', verb):
            if form in words and form != state and state in words:
                out[form] = state
    return out
DETERMINERS = frozenset(_rule_list('determiners'))
OBJECT_PRONOUNS = frozenset(_rule_list('object_pronouns'))
SUBJECT_PRONOUNS = frozenset(_rule_list('subject_pronouns'))
COPULAS = frozenset(_rule_list('copulas'))
PREPOSITIONS = frozenset(_rule_list('prepositions'))
LOCATION_PREPOSITIONS = frozenset(_rule_list('location_prepositions'))
NEGATIONS = frozenset(_rule_list('negations'))
#: (regex over lower-cased text, valence) of the rule extractor's outcome cues
FAILURE_CUES: tuple[tuple[str, float], ...] = tuple((p, float(v)) for v, p in _rule_pairs('failure_cues'))
SUCCESS_CUES: tuple[tuple[str, float], ...] = tuple((p, float(v)) for v, p in _rule_pairs('success_cues'))

_IRREGULAR_PLURALS = dict(_rule_pairs('irregular_plurals'))
_IRREGULAR_FORMS = {verb: tuple(forms.split()) for verb, forms in _rule_pairs('irregular_forms')}
_BOTH_PASTS = frozenset(_rule_list('both_pasts'))  # "spilled" and "spilt"
_DOUBLING = frozenset(_rule_list('doubling'))  # longer verbs whose final consonant doubles
_VOWELS = frozenset('aeiou')


def singular(word: str) -> str:
    """Singular of an English noun for the rule extractor (known nouns win over rules)."""
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if word in NOUN_TYPES or len(word) < 4 or not word.endswith('s') or word.endswith('ss'):
        return word
    candidates: list[str] = []
    if word.endswith('ies'):
        candidates.append(word[:-3] + 'y')
    if word.endswith('ves'):
        candidates += [word[:-3] + 'f', word[:-3] + 'fe']
    if word.endswith('es'):
        candidates.append(word[:-2])
    candidates.append(word[:-1])
    for candidate in candidates:
        if candidate in NOUN_TYPES or candidate in COMPOUND_MODIFIERS:
            return candidate
    if word.endswith(('ches', 'shes', 'xes', 'zes', 'sses')):
        return word[:-2]
    if word.endswith('ies'):
        return word[:-3] + 'y'
    return word[:-1]


def _doubles(verb: str) -> bool:
    """One-syllable consonant-vowel-consonant verbs double: drop -> dropped, scan -> scanned."""
    if verb in _DOUBLING:
        return True
    if len(verb) < 3 or verb[-1] in _VOWELS or verb[-1] in 'wxy':
        return False
    syllables = sum(1 for i, c in enumerate(verb) if c in _VOWELS and (i == 0 or verb[i - 1] not in _VOWELS))
    return syllables == 1 and verb[-2] in _VOWELS and verb[-3] not in _VOWELS


def _regular_forms(verb: str) -> tuple[str, ...]:
    if verb.endswith('e') and not verb.endswith(('ee', 'ye', 'oe')):
        stem = verb[:-1]
        return (verb + 's', verb + 'd', stem + 'ing')
    if verb.endswith('y') and len(verb) > 2 and verb[-2] not in 'aeiou':
        return (verb[:-1] + 'ies', verb[:-1] + 'ied', verb + 'ing')
    if _doubles(verb):
        double = verb + verb[-1]
        return (verb + 's', double + 'ed', double + 'ing')
    plural = verb + 'es' if verb.endswith(('s', 'sh', 'ch', 'x', 'z', 'o')) else verb + 's'
    return (plural, verb + 'ed', verb + 'ing')


def verb_forms(verbs: Iterable[str]) -> dict[str, str]:
    """Map every inflected form of ``verbs`` (and the base form) to its lemma."""
    forms: dict[str, str] = {}
    for verb in verbs:
        inflected = _regular_forms(verb)
        if verb in _IRREGULAR_FORMS:
            past = _IRREGULAR_FORMS[verb]
            if verb not in _BOTH_PASTS:
                # Irregular verbs keep their regular -s and -ing forms only.
                inflected = tuple(f for f in inflected if not f.endswith(('ed', 'd')))
            inflected += past
        for form in (verb, *inflected):
            forms.setdefault(form, verb)
    return forms


#: inflected form -> lemma, for the verbs above (in file order: the first verb wins a form)
VERB_FORMS: dict[str, str] = verb_forms(_rule_list('verbs'))


def past_forms(verb: str) -> tuple[str, ...]:
    """The past forms of ``verb`` ("lock": locked; "break": broke, broken; "shut": shut)."""
    irregular = _IRREGULAR_FORMS.get(verb)
    if irregular is None:
        return (_regular_forms(verb)[1],)
    pasts = tuple(f for f in irregular if not f.endswith('s')) or (verb,)  # "goes" is no past
    return pasts + ((_regular_forms(verb)[1],) if verb in _BOTH_PASTS else ())


@functools.cache
def done_states() -> dict[str, str]:
    """The past form of an act that leaves its thing in a state -> that state, as a sentence's
    parse files it: a form that is a state word itself, by its one value ("locked"; "opened" is
    open, "shut" closed), else the verb's result ("wiped" clean, "filled" full)."""
    words, same = state_words(), participle_states()
    out: dict[str, str] = {}
    for verb, state in VERB_RESULT_STATES.items():
        for form in past_forms(verb):
            if form in words:
                out[form] = same.get(form, form)
            elif state in words:
                out[form] = state
    return out


#: Words that say when: days, times of day, months.
TIME_NOUNS = frozenset({
    'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'weekend', 'noon',
    'midnight', 'morning', 'afternoon', 'evening', 'night', 'today', 'tonight', 'tomorrow', 'yesterday',
    'january', 'february', 'march', 'april', 'june', 'july', 'august', 'september', 'october',
    'november', 'december', 'christmas', 'birthday'})
_ORDINAL = re.compile(r'^\d{1,2}(?:st|nd|rd|th)$')


def ordinal(word: str) -> bool:
    """A date's ordinal ("5th", "21st")."""
    return bool(_ORDINAL.match(word))


def time_word(word: str) -> bool:
    """``word`` (lower case) says when, not where ("monday", "noon", "5th")."""
    return word in TIME_NOUNS or ordinal(word)


#: What only a device that is on does ("a television showing cartoons", "a lamp glowing").
WORKING = frozenset({'show', 'display', 'play', 'glow', 'shine', 'blare', 'stream'})
