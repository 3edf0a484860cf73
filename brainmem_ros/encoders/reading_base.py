"""What every part of a parse reading shares: its state, the word classes and the token tests.

:class:`ReadingBase` holds what :class:`brainmem_ros.encoders.parsed._Reading` sets up from
one parse; the layers above it (actions, entities, outcome, states: one module each) read it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import (
    NOUN_TYPES,
    ordinal,
    time_word,
    units,
)
from brainmem_ros.encoders.verb_forms import verb_base
from brainmem_ros.memory.types import speaker_label

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

CAMEL = re.compile(r'^[A-Z][a-z]+(?:[A-Z][a-z]*)+$')
CAMEL_PART = re.compile(r'[A-Z][a-z]*')
SNAKE = re.compile(r'^[A-Za-z]+(?:_[A-Za-z0-9]+)+$')
CODE = re.compile(r'^(?:\d+|[A-Z]\d*|[A-Z]{1,2}\d+[A-Z]?)$')
NOMINAL = frozenset({'NOUN', 'PROPN'})
LEFT_MODIFIERS = frozenset({'compound', 'amod', 'nmod', 'npadvmod'})
PLACE_PREPS = frozenset({'on', 'onto', 'in', 'into', 'at', 'to', 'inside', 'under', 'beside',
                          'behind', 'near', 'against', 'by', 'above', 'below', 'beneath',
                          'underneath', 'atop', 'over', 'between', 'among', 'alongside', 'down'})
# Where a subject that does nothing to an object comes to rest ("the cat jumped onto the
# sofa"); "to" and "at" also follow verbs of looking and talking ("looked at the table").
RESTING_PREPS = PLACE_PREPS - {'to', 'at', 'over'}
#: The location of a thing taken from a place with no destination given ("took the keys
#: from the drawer"): it is no longer there, it is held by whoever took it.
HELD = 'held'
NOT_HAPPENED = frozenset({'without', 'no', 'never', 'almost', 'nearly', 'barely'})
ABILITY = frozenset({'can', 'could', 'cannot', 'unable'})
ARRIVALS = frozenset({'goal', 'destination', 'target', 'waypoint'})
POWER = frozenset({'on', 'off'})
#: Words of part degree that stay with a state: a window "half open" is not open.
PARTIAL = frozenset({'half', 'partly', 'partially', 'slightly', 'halfway'})
#: Degrees short of a state: an act "almost" done did not happen, a thing "almost empty" is so.
NEARLY = frozenset({'almost', 'nearly'})
CONDITIONS = frozenset({'before', 'until', 'till', 'if', 'unless', 'when', 'once', 'whenever'})
# Verbs whose past tense is their base form. Robot logs report in the past tense, so a
# clause opening with one of these ("Put the cup in the sink") may be a done act; with
# any other verb a bare base form is an order ("Close the door"). A closed class of English.
SAME_PAST = frozenset({'put', 'set', 'cut', 'shut', 'hit', 'let', 'read', 'spread', 'quit', 'cast',
                       'cost', 'hurt', 'split', 'burst', 'bet', 'bid', 'fit', 'rid', 'shed', 'slit',
                       'thrust', 'upset', 'wet', 'knit', 'broadcast', 'forecast', 'beat', 'bust'})
# Adverbs of a place a thing was moved to without naming it ("brought the basket upstairs").
DIRECTIONS = frozenset({'inside', 'outside', 'indoors', 'outdoors', 'upstairs', 'downstairs', 'home'})
# Words that make a clause a request whatever its verb ("Please finish the dishes").
REQUEST_MARKERS = frozenset({'please', 'kindly'})


class ReadingBase:
    """The state of one parse read once (set by ``_Reading.__init__``)."""

    doc: Doc
    nouns: frozenset[str]
    verbs: frozenset[str]
    irregular: dict[str, list[str]]
    self_vocab: frozenset[str]
    stop: frozenset[str]
    states: frozenset[str]
    skip: set[int]
    as_verb: set[int]
    as_noun: set[int]
    camel_actions: dict[int, str]
    _spans: list[tuple[int, int, int]] | None
    heads: dict[int, int]
    speaker: str  # who says the utterance ("Zoe: ..."), '' when no one is named (set with heads)
    _colon: int | None = None

    def speaker_colon(self) -> int:
        """:func:`speaker_tag` of this parse, read once."""
        if self._colon is None:
            self._colon = speaker_tag(self.doc)
        return self._colon

    def _request(self, tok: Token) -> bool:
        """An order or a request, not a report of what happened: "Please finish the dishes",
        "Close the door" (a bare base form with no subject), not "Put the cup away" (see
        :data:`SAME_PAST`) nor "Closed the door"."""
        if any(c.lower_ in REQUEST_MARKERS and c.dep_ in {'intj', 'advmod', 'discourse'}
               for c in tok.children):
            return True
        if tok.tag_ != 'VB' or tok.dep_ != 'ROOT' or self._inflected(tok) or (
                tok.lower_ in SAME_PAST and not self._told_to(tok)):
            return False  # the small tagger calls an opening past form "VB" too ("Pushed the chair")
        # An order opens its clause ("On the bench lie ..." is no order; a speaker's name before
        # it is no part of it) and has no subject.
        opens = max(tok.sent.start, self.speaker_colon() + 1 if self.speaker_colon() else 0)
        return all(t.is_punct or t.dep_ in {'intj', 'discourse'} for t in tok.doc[opens:tok.i]) \
            and not any(c.dep_ in {'nsubj', 'nsubjpass', 'aux', 'auxpass', 'expl'} for c in tok.children)

    def _told_to(self, tok: Token) -> bool:
        """An opening "Put ..." (or "Set", "Shut") is an order, not a log's past, when a person
        says it ("Sam: Put the ice cream back in the freezer") or a clause of it is in the present
        ("Put the ice cream back in the freezer before it melts")."""
        who = self.doc[:self.speaker_colon()].text.lower()  # (read here: outcomes come before names)
        return (bool(who) and not self._is_self(who)) or any(
            c.dep_ == 'advcl' and c.tag_ in {'VBZ', 'VBP'} for c in tok.children)

    def _verb_lemma(self, tok: Token) -> str:
        """The verb's base form: the lemmatizer's when it is a verb, else the one the inflection
        gives ("unscrewed", "tore"), else the lemmatizer's."""
        lemma = tok.lemma_.lower()
        return lemma if lemma in self.verbs else verb_base(tok.lower_, self.verbs, self.irregular) or lemma

    def _inflected(self, tok: Token) -> bool:
        """The word is a verb's inflected form, not its base ("Pushed", "Took": the small
        tagger calls such a word "VB" when it opens a sentence)."""
        word = tok.lower_
        return word in self.irregular or verb_base(word, self.verbs, self.irregular) not in {'', word}

    def _is_self(self, name: str) -> bool:
        words = name.replace('_', ' ').split()
        if name in self.self_vocab or ' '.join(words) in self.self_vocab:
            return True
        # "left gripper", "front camera", "tray sensor" are the robot's; "television screen",
        # "kitchen speaker" are an appliance's part or a room's device.
        return any(' '.join(words[i:]) in self.self_vocab
                   and not any(NOUN_TYPES.get(w) in _OTHERS_PARTS for w in words[:i])
                   for i in range(1, len(words)))

    def _hand_holder(self, hand: Token) -> str:
        """Who has what the robot's ``hand`` has: the speaker's "my hand", else :data:`HELD`."""
        mine = any(c.dep_ == 'poss' and c.lower_ == 'my' for c in hand.children)
        return self.speaker if mine and self.speaker else HELD


# Kinds of thing whose screen, speaker or sensor is no part of the robot.
_OTHERS_PARTS = frozenset({'appliance', 'place'})
#: A log level or kind opening a line, in capitals ("ALERT garage door left open").
LOG_LEVELS = frozenset({'DEBUG', 'INFO', 'NOTICE', 'WARN', 'WARNING', 'ERROR', 'ERR', 'CRITICAL', 'FATAL',
                        'ALERT', 'EVENT', 'TRACE'})


def log_prefix(doc: Doc) -> set[int]:
    """Token positions of a leading ``[logger_name]`` tag of a ROS log line, or of a log level
    opening a line ("ALERT garage door left open")."""
    if len(doc) > 2 and doc[0].text in LOG_LEVELS:
        return {0}
    if len(doc) < 3 or doc[0].text != '[':
        return set()
    for tok in doc[1:8]:
        if tok.text == ']':
            return set(range(tok.i + 1))
    return set()


def is_code(doc: Doc, i: int, as_noun: set[int] | frozenset[int] = frozenset()) -> bool:
    """An identifier after a noun ("floor 3", "shelf B2"), not a quantity ("87 %", "3 m")."""
    tok = doc[i]
    if not CODE.match(tok.text) or (tok.text == 'I' and tok.pos_ == 'PRON'):
        return False  # (not "the towel I used")
    if i + 1 < len(doc):
        nxt = doc[i + 1]
        unit = nxt.lower_.rstrip('.')
        if nxt.text in {'%', 'x'} or unit in units():
            return False
    prev = doc[i - 1] if i > 0 else None
    return prev is not None and (prev.pos_ in NOMINAL | {'ADJ'} or prev.i in as_noun) and not prev.is_punct


def a_time(tok: Token) -> bool:
    """``tok`` says when, not where: a day, a time of day, a month ("on Monday", "at noon"), a
    date's ordinal ("on the 5th"), or a time of day after a day ("on Saturday night")."""
    return time_word(tok.lemma_.lower()) or time_word(tok.lower_)


def dated(tok: Token) -> bool:
    """A time of day that a day names ("Saturday night", "the 5th"): a date, not a stretch of time
    ("on all night")."""
    return ordinal(tok.lower_) or any(
        c.dep_ in {'compound', 'nmod', 'npadvmod'} and a_time(c) for c in tok.children)


def has_object(tok: Token) -> bool:
    """A direct object makes a verb whatever the tagger said ("Hung the coat ...")."""
    return any(c.dep_ in {'dobj', 'obj'} for c in tok.children)


def determined(tok: Token) -> bool:
    """A noun with its determiner or possessive ("the TV", "my keys"), not a bare one."""
    return any(c.dep_ in {'det', 'poss'} for c in tok.children)


def speaker_tag(doc: Doc) -> int:
    """The position of the colon after a speaker's name opening ``doc`` ("Lucía: it's in my
    backpack"), or 0 when none does."""
    tag = next((t.i for t in doc[1:3] if t.text == ':'), 0)
    return tag if speaker_label([t.text for t in doc[:tag]]) else 0


def a_place(tok: Token, names: dict[int, str]) -> bool:
    """``tok`` names a room or another place ("a bathroom", "the dining room"), by its word or
    by the name it heads (``names``: token index -> name)."""
    return tok.lemma_.lower() == 'room' or 'place' in (NOUN_TYPES.get(tok.lemma_.lower()),
                                                       NOUN_TYPES.get(names.get(tok.i, '')))


# Verbs whose object may be an activity rather than a thing ("began the night round").
_ASPECTUAL = frozenset({'begin', 'start', 'finish', 'continue', 'resume', 'complete'})


def an_activity(tok: Token) -> bool:
    """``tok`` is what someone began or finished and no kind of thing the lexicon knows: an
    activity ("began the night round at the back door", "finished the tour"), which is
    nowhere and which no later "it" stands for; "started the dishwasher", "finished the
    laundry" act on things."""
    return tok.dep_ == 'dobj' and tok.head.lemma_.lower() in _ASPECTUAL \
        and tok.lemma_.lower() not in NOUN_TYPES


# Which side or end of a thing: "the back step" is a place, a "step" of a task is not.
_SIDES = frozenset({'front', 'back', 'rear', 'top', 'bottom', 'lower', 'upper'})


def sided(tok: Token) -> bool:
    """A thing the lexicon knows, named by its side or end ("the back step", "the top step"),
    whose word alone is too often no thing to name one ("step 3 of the task")."""
    return tok.lemma_.lower() in NOUN_TYPES and any(
        c.dep_ in {'amod', 'compound'} and c.lower_ in _SIDES for c in tok.children)


DEVICE_KINDS = frozenset({'appliance', 'furniture'})
_EVERY = frozenset({'every', 'each', 'when', 'whenever', 'if'})  # "every day", "when I leave"
_HABITUAL = frozenset({'always', 'usually', 'often', 'sometimes', 'never', 'rarely', 'normally', 'generally',
                       'typically', 'regularly', 'seldom', 'occasionally'})


def is_person(tok: Token) -> bool:
    """``tok`` names a person: a name, or a noun for one ("her grandmother"). A title-cased
    appliance or piece of furniture is the name a home system gives it ("Garage Door changed
    to Closed"); other names of things stay names ("Biscuit" the dog, "Pepper")."""
    lemma = tok.lemma_.lower()
    kind = NOUN_TYPES.get(lemma)
    if tok.pos_ != 'PROPN':
        return kind == 'person'
    parts = [c.lower_ for c in tok.lefts if c.dep_ == 'compound']
    # "Washing Machine"; "Front Door Lock", the lock of a device
    kinds = {kind, NOUN_TYPES.get(' '.join([*parts, lemma])), *(NOUN_TYPES.get(w) for w in parts)}
    return not kinds & DEVICE_KINDS


def narrated(tok: Token) -> bool:
    """A present tense that narrates what happens, as a caption, a video or a robot does ("#C C
    opens the fridge", "so I switch it off"); not a habit ("always", "every day", "when I go")."""
    mine = tok.tag_ == 'VBP' and any(c.dep_ == 'nsubj' and c.lower_ in {'i', 'we'} for c in tok.children)
    return (tok.tag_ == 'VBZ' or mine) and not any(
        c.lower_ in _HABITUAL or any(g.lower_ in _EVERY for g in c.children)
        for c in tok.children if c.dep_ in {'advmod', 'npadvmod', 'advcl'})


def indefinite(tok: Token) -> bool:
    """"a sandwich": some thing, not one whose state the memory can follow."""
    return any(c.dep_ == 'det' and c.lower_ in {'a', 'an', 'some', 'another'} for c in tok.children)


def present_copula(tok: Token) -> bool:
    """``tok`` has a present-tense copula or auxiliary ("is", "are", "am")."""
    return any(c.dep_ in {'auxpass', 'aux'} and c.lower_ in {'is', 'are', "'s", "'re", 'am'}
               for c in tok.children)


def conditional(tok: Token) -> bool:
    """A clause that says when or if, not what happened ("before the guests arrive")."""
    return tok.dep_ == 'advcl' and any(c.dep_ == 'mark' and c.lower_ in CONDITIONS for c in tok.children)


def imperative(tok: Token) -> bool:
    """"Don't move the vase": a negated request, not a failure."""
    return any(c.dep_ == 'aux' and c.lower_ in {'do', 'does'} for c in tok.children) and not any(
        c.dep_ in {'nsubj', 'nsubjpass'} for c in tok.children)


def place_preps(thing: Token) -> list[Token]:
    """The place phrases that hang on ``thing`` itself ("the white lamp in the hallway")."""
    return [p for p in thing.children if p.dep_ == 'prep' and p.lower_ in PLACE_PREPS]



def what_for(prep: Token, preps: list[Token]) -> bool:
    """"to thaw" read as a preposition and a noun after a place phrase of the same verb ("in
    the fridge to thaw"): a bare word that names no known thing after "to" says what for (not
    "to bed", "to the fridge", "to Hannah"; alone, "to storage" may be a place)."""
    return prep.lower_ == 'to' and any(p.lower_ in PLACE_PREPS and p.i < prep.i for p in preps) and any(
        o.dep_ == 'pobj' and not list(o.children) and o.pos_ != 'PROPN' and o.lemma_.lower() not in NOUN_TYPES
        for o in prep.children)


# What a thing does by itself where it was put or left ("hung the towel to dry on the balcony").
_SETTLING = frozenset({'dry', 'cool', 'soak', 'charge', 'thaw', 'defrost', 'drain', 'rest', 'air', 'rise',
                       'steep', 'marinate', 'settle', 'set', 'warm', 'ripen', 'chill'})


def settling(verb: Token) -> bool:
    """An infinitive of purpose whose subject is the thing acted on, not the actor: "hung the
    towel to dry on the balcony", "an umbrella spread open to dry in the bathtub" (the towel
    dries, on the balcony); not "moved the chair to sit in the sun"."""
    return verb.dep_ in {'xcomp', 'advcl'} and verb.tag_ == 'VB' and verb.lemma_.lower() in _SETTLING and any(
        c.dep_ == 'aux' and c.lower_ == 'to' for c in verb.children)
