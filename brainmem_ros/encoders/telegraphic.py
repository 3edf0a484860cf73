"""Telegraphic reports given the articles the parser was trained on.

A robot's log drops its articles: "moved box to garage", "turned off lamp", "[INFO]
[manipulation]: picked up remote from sofa". The small parser reads such a line by guesses
it learnt on edited English ("box" the verb's object, "to garage" an infinitive, "remote"
an adverb) and the line states nothing. A report that opens with a past form of a verb and
has no determiner at all is parsed with "the" before the thing after the verb (and its
particle) and after each preposition of place; what is read is the same words.

>>> articled('moved box to garage', frozenset({'move'}), {})
'moved the box to the garage'
>>> articled('[INFO] [arm]: picked up remote from sofa', frozenset({'pick'}), {})
'[INFO] [arm]: picked up the remote from the sofa'
>>> articled('moved the box to garage', frozenset({'move'}), {})  # not telegraphic
'moved the box to garage'
>>> articled('Left wheel motor overheated', frozenset({'leave'}), {'left': ['leave']})  # a side
'Left wheel motor overheated'
>>> articled('Failed to create plan to kitchen', frozenset({'fail', 'create'}), {})  # an infinitive
'Failed to create plan to the kitchen'

A report that opens with a capitalised past form right before a name ("Detected Alice in the
kitchen", "Spotted Bob by the door") is parsed with the verb in lower case: capitalised, the
tagger read it as the first word of the name ("Detected Alice", somebody at the kitchen).

>>> articled('Spotted Bob by the door', frozenset({'spot'}), {})
'spotted Bob by the door'

A skill a log reports done, a verb's base form before an identifier and a word of success
("grasp vial_red OK"), is parsed as the verb's past without the word: the tagger read the
base form as a noun ("a release") and the identifier as the verb.

>>> reported('release vial_red at centrifuge_rack OK', frozenset({'release'}))
'released vial_red at centrifuge_rack'
>>> reported('grab tool_3: SUCCESS', frozenset({'grab'}))
'grabbed tool_3'
>>> reported('grasp vial_red FAILED', frozenset({'grasp'}))
'grasp vial_red FAILED'
"""

from __future__ import annotations

import re

from brainmem_ros.encoders.lexicon import past_forms
from brainmem_ros.encoders.verb_forms import verb_base

# Log prefixes before the message: a level or node in brackets, a time stamp, "topic:".
_PREFIX = re.compile(r'^(?:\s*(?:\[[^\]]*\]:?|\d[\d\-:T.+Z/]*\d|[A-Za-z_][\w./-]*:(?=\s)))*\s*')
_WORD = re.compile(r"[A-Za-z][\w'-]*|\d[\w.:-]*|[^\w\s]")
# Any of these makes the line edited English: left as it is.
_DETERMINERS = frozenset({'the', 'a', 'an', 'my', 'your', 'his', 'her', 'its', 'our', 'their', 'this',
                          'that', 'these', 'those', 'some', 'any', 'no', 'all', 'each', 'every', 'both'})
_PARTICLES = frozenset({'up', 'down', 'off', 'on', 'out', 'away', 'back', 'over', 'in'})
_PREPOSITIONS = frozenset({'to', 'into', 'onto', 'on', 'in', 'from', 'at', 'under', 'behind', 'beside', 'by',
                           'near', 'inside', 'off', 'of', 'above', 'below'})
# Words that take no article after a verb or a preposition.
_BARE = frozenset({'it', 'them', 'him', 'her', 'me', 'us', 'you', 'there', 'here', 'home', 'again', 'now',
                   'and', 'or', 'but', 'then', 'with', 'for', 'as', 'because', 'while', 'after', 'next',
                   'before', 'until', 'left', 'right', 'upstairs', 'downstairs', 'inside', 'outside', 'top',
                   'front', 'out'})
# Verbs whose object is an activity, not a thing ("Attempted grasp on wine glass", "Started
# cleaning"): their object keeps its bare form.
_ACTIVITY_VERBS = frozenset({'attempt', 'try', 'retry', 'start', 'begin', 'finish', 'complete', 'abort',
                             'cancel', 'resume', 'stop', 'pause', 'skip'})
# Verbs whose "to" is an infinitive's, not a place's ("Failed to create plan to kitchen").
_INFINITIVE_VERBS = frozenset({'fail', 'try', 'attempt', 'want', 'need', 'manage', 'forget', 'refuse',
                               'decide', 'plan', 'start', 'begin', 'continue', 'remember', 'agree', 'choose'})
_QUOTES = frozenset({"'", '"'})
# Words after which a new clause's verb may come ("opened fridge, took out milk").
_CLAUSE = frozenset({',', ';', 'and', 'then'})


def articled(text: str, verbs: frozenset[str], irregular: dict[str, list[str]]) -> str:
    """``text`` with "the" where a telegraphic report left it out (see the module), else as is."""
    head = _PREFIX.match(text)
    start = head.end() if head else 0
    words = [(m.start() + start, m.group()) for m in _WORD.finditer(text[start:])]
    opens_past = bool(words) and _past(words[0][1], verbs, irregular)
    name = next((w for _, w in words[1:3] if w not in _QUOTES), '')  # "Detected 'Alice' in ..."
    if opens_past and name[:1].isupper() and words[0][1][:1].isupper() and words[0][1][1:].islower():
        pos, verb = words[0]
        text = text[:pos] + verb.lower() + text[pos + len(verb):]
    if not opens_past or any(w.lower() in _DETERMINERS for _, w in words):
        return text
    at: list[int] = []  # where "the" goes
    for i, (_, word) in enumerate(words):
        low = word.lower()
        if low in _PREPOSITIONS and i > 0:
            if low != 'to' or verb_base(words[i - 1][1].lower(), verbs, irregular) not in _INFINITIVE_VERBS:
                at += _thing_at(words, i + 1)
        elif _past(word, verbs, irregular) and (i == 0 or words[i - 1][1].lower() in _CLAUSE) \
                and verb_base(low, verbs, irregular) not in _ACTIVITY_VERBS:
            j = i + 1
            if j + 1 < len(words) and words[j][1].lower() in _PARTICLES \
                    and words[j + 1][1].lower() not in _PREPOSITIONS:
                j += 1  # "picked up remote": the particle, then the thing
            at += _thing_at(words, j)
    for pos in sorted(set(at), reverse=True):
        text = text[:pos] + 'the ' + text[pos:]
    return text


# A preposition, a bare noun and its letter ("to ward C", "at bay B2").
_CODED_PLACE = re.compile(r'\b(to|into|onto|from|at|in|on|near|by|beside)\s+([a-z]+)\s+'
                          r'(?=[A-Z]{1,2}\d*\b)')  # (a number after "to room" reads well)


def coded_places(text: str, verbs: frozenset[str]) -> str:
    """``text`` with "the" before a place named by a noun that is also a verb and a letter ("to
    ward C", "at bay B2"): the tagger read "to ward" as an infinitive, and the place was lost.

    >>> coded_places('I wheeled the cart to ward C and parked it.', frozenset({'ward', 'park'}))
    'I wheeled the cart to the ward C and parked it.'
    """
    return _CODED_PLACE.sub(lambda m: f'{m.group(1)} the {m.group(2)} ' if m.group(2) in verbs else m.group(),
                            text)


# A base form, an identifier (with an underscore or a digit), the rest, a word of success.
_DONE = re.compile(r'^([a-z]+)(\s+[A-Za-z]*[_\d][\w.-]*\b.*?)\s*(?:[:-]+>?\s*)?'
                   r'\b(?i:ok|success|succeeded|done|complete|completed)\s*$')


def reported(text: str, verbs: frozenset[str]) -> str:
    """``text`` with a skill it reports done in the past (see the module), else as is."""
    done = _DONE.match(text.strip())
    if done is None or done.group(1) not in verbs or '=' in text:  # (a record's fields read alone)
        return text
    return past_forms(done.group(1))[0] + done.group(2)


def _past(word: str, verbs: frozenset[str], irregular: dict[str, list[str]]) -> bool:
    """``word`` is a past form of a verb ("moved", "took"); not "left", as often a side ("Left
    wheel motor overheated") as a verb."""
    low = word.lower()
    return (low.endswith('ed') or low in irregular) and low != 'left' \
        and bool(verb_base(low, verbs, irregular))


def _thing_at(words: list[tuple[int, str]], i: int) -> list[int]:
    """The position of ``words[i]`` when it is a bare word that can name a thing (not a name:
    "to Maria"), else none."""
    if i >= len(words):
        return []
    pos, word = words[i]
    low = word.lower()
    thing = word[:1].isalpha() and not word[:1].isupper() and low not in _BARE and low not in _PREPOSITIONS
    return [pos] if thing else []
