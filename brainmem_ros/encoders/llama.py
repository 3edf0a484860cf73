"""LLM enrichment through llama.cpp: a grounded extractor and a reasoner.

``LlamaExtractor`` runs the rule extractor, asks the model to pick extra entities
and actions from candidate phrases of the text (the grammar allows nothing else),
plus state changes, outcome, importance and valence; validates the JSON, grounds
every item in the text again, and merges the survivors onto the rule result.
``LlamaReasoner`` infers relations between memories and reflects on a batch.
Both raise ExtractionError (timeout, invalid output) or ModelError (no model)
rather than return something unchecked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from brainmem_ros.encoders import prompts
from brainmem_ros.encoders.base import Insight, Relation, TextReader
from brainmem_ros.encoders.bounds import bound_ratings
from brainmem_ros.encoders.cache import LruCache
from brainmem_ros.encoders.candidates import Candidates, find_candidates
from brainmem_ros.encoders.grounding import (
    TextEvidence,
    ground_actions,
    ground_entities,
    ground_state_changes,
)
from brainmem_ros.encoders.lexicon import singular
from brainmem_ros.encoders.llama_chat import ChatBackend, LlamaChat
from brainmem_ros.encoders.rules import RuleExtractor
from brainmem_ros.errors import ConfigError, ExtractionError
from brainmem_ros.memory.types import EdgeKind, Entity, Extraction, Outcome, StateChange

_CHANGE = re.compile(r'^\s*([^.=]{1,40})\.([^.=]{1,24})\s*=\s*([^=]{1,40})$')
_WORD = re.compile(r'[a-z]{3,}')


def _field(payload: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = payload.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        msg = f'LLM output field {name!r} is missing or not {getattr(kind, "__name__", kind)}'
        raise ExtractionError(msg)
    return value


def _strings(payload: Mapping[str, Any], name: str, *, max_items: int, max_chars: int) -> list[str]:
    items = _field(payload, name, list)
    if len(items) > max_items or not all(isinstance(i, str) and len(i) <= max_chars for i in items):
        msg = f'LLM output field {name!r} breaks the schema (<= {max_items} strings of <= {max_chars} chars)'
        raise ExtractionError(msg)
    return list(items)


def _number(payload: Mapping[str, Any], name: str) -> float:
    value = float(_field(payload, name, (int, float)))
    if not math.isfinite(value):
        msg = f'LLM output field {name!r} is not a finite number'
        raise ExtractionError(msg)
    return value


def _clamp(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


def _parse_change(raw: str) -> StateChange | None:
    match = _CHANGE.match(raw)
    if match is None:
        return None
    obj, attribute, after = (g.strip() for g in match.groups())
    return StateChange(object=obj, attribute=attribute, after=after)


def _entity_name(phrase: str) -> str:
    words = phrase.split()
    return ' '.join([*words[:-1], singular(words[-1])]) if words else ''


def extraction_schema(candidates: Candidates) -> dict[str, Any]:
    """The flat extraction schema, with entity and action items limited to ``candidates``."""
    schema: dict[str, Any] = {**prompts.EXTRACT_SCHEMA,
                              'properties': dict(prompts.EXTRACT_SCHEMA['properties'])}
    for name, values, limit, chars in (
            ('entities', candidates.entities, prompts.MAX_ENTITIES, prompts.MAX_NAME_CHARS),
            ('actions', candidates.actions, prompts.MAX_ACTIONS, prompts.MAX_ACTION_CHARS)):
        usable = [v for v in values if len(v) <= chars][:limit]
        if usable:
            schema['properties'][name] = {'type': 'array', 'maxItems': len(usable),
                                          'items': {'type': 'string', 'enum': usable}}
        else:
            # An empty enum is not a valid grammar; an always-empty list is.
            schema['properties'][name] = {'type': 'array', 'maxItems': 0,
                                          'items': {'type': 'string', 'maxLength': 1}}
    return schema


class LlamaExtractor:
    """Extractor that merges grounded LLM output onto the rule extractor's.

    ``chat`` (or ``LlamaReasoner(extractor)``) shares one loaded model;
    ``loader`` replaces the llama.cpp loader (tests). ``cache_size`` identical texts are answered from
    memory. ``max_text_chars`` bounds what the model reads (rules read it all).
    ``ratings_from`` reads the outcome, importance and valence the text supports, which
    bound the model's ratings (default: the spaCy parser, :mod:`brainmem_ros.encoders.bounds`),
    and the words and lemmas every grounded item must be made of.
    """

    def __init__(self, model_path: str | Path, *, n_ctx: int = 1024, n_threads: int = 2,
                 timeout_s: float = 20.0, max_tokens: int = 256,
                 rules: RuleExtractor | None = None, cache_size: int = 128,
                 max_text_chars: int = 1000, chat: LlamaChat | None = None,
                 loader: Callable[[], ChatBackend] | None = None,
                 ratings_from: TextReader | None = None) -> None:
        if max_tokens < 16 or max_text_chars < 1:
            msg = (f'invalid extractor options: max_tokens={max_tokens} (>= 16), '
                   f'max_text_chars={max_text_chars} (>= 1)')
            raise ConfigError(msg)
        self.chat = chat or LlamaChat(model_path, n_ctx=n_ctx, n_threads=n_threads,
                                      timeout_s=timeout_s, loader=loader)
        self._rules = rules or RuleExtractor()
        self._ratings_from = ratings_from
        self._max_tokens = max_tokens
        self._max_text_chars = max_text_chars
        self._cache: LruCache[tuple[str, tuple[str, ...]], Extraction] = LruCache(cache_size)

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        """Rule extraction of ``text`` enriched with the grounded LLM answer."""
        key = (text, tuple(known_entities))
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        base = self._rules.extract(text, known_entities=known_entities)
        if not text.strip():
            return base
        clipped = text[:self._max_text_chars]
        # Token positions of the clipped text equal those of the full text's prefix.
        spans = self._rules.entity_spans(clipped, known_entities=known_entities)
        candidates = find_candidates(clipped, covered_spans=[(s.start, s.end) for s in spans])
        payload = self.chat.complete_json(prompts.extract_prompt(clipped),
                                          extraction_schema(candidates),
                                          max_tokens=self._max_tokens)
        if self._ratings_from is None:
            from brainmem_ros.encoders.parsed import SpacyExtractor  # loads spaCy only when used

            self._ratings_from = SpacyExtractor()
        supported = self._ratings_from.extract(text, known_entities=known_entities)
        evidence = TextEvidence(text, words=self._ratings_from.words(text))
        result = _merge(base, payload, evidence, known_entities, supported)
        self._cache.put(key, result)
        return result


def _merge(base: Extraction, payload: Mapping[str, Any], evidence: TextEvidence,
           known_entities: Sequence[str], supported: Extraction | None = None) -> Extraction:
    entity_names = _strings(payload, 'entities', max_items=prompts.MAX_ENTITIES,
                            max_chars=prompts.MAX_NAME_CHARS)
    action_names = _strings(payload, 'actions', max_items=prompts.MAX_ACTIONS,
                            max_chars=prompts.MAX_ACTION_CHARS)
    change_strings = _strings(payload, 'state_changes', max_items=prompts.MAX_STATE_CHANGES,
                              max_chars=prompts.MAX_CHANGE_CHARS)
    outcome_name = _field(payload, 'outcome', str)
    if outcome_name not in prompts.OUTCOMES:
        msg = f'LLM output field outcome is not one of {prompts.OUTCOMES}: {outcome_name!r}'
        raise ExtractionError(msg)
    importance = _clamp(_number(payload, 'importance'), 1.0, 10.0)
    valence = _clamp(_number(payload, 'valence') / prompts.VALENCE_STEPS, -1.0, 1.0)

    entities = ground_entities((_entity_name(n) for n in entity_names), evidence,
                               known_entities=known_entities)
    actions = ground_actions(action_names, evidence)
    parsed = [_parse_change(s) for s in change_strings]
    all_entities = _union_entities(base.entities, entities.kept)
    changes = ground_state_changes([c for c in parsed if c is not None], evidence,
                                   entities=all_entities)
    unparsable = sum(1 for c in parsed if c is None)

    llm_outcome = Outcome(outcome_name)
    # A 270M model says "success" with valence -2 for almost anything: an answer
    # whose outcome and valence contradict each other is discarded as a whole.
    consistent = (llm_outcome is Outcome.UNKNOWN
                  or (llm_outcome is Outcome.SUCCESS and valence > 0)
                  or (llm_outcome is Outcome.FAILURE and valence < 0))
    # The text is untrusted: the ratings stay within what its parse supports.
    reading = supported or base
    ratings = bound_ratings(reading, n_entities=len(all_entities), outcome=llm_outcome,
                            importance=importance, valence=valence)
    outcome = ratings.outcome
    final_valence = reading.valence if reading.valence is not None or not consistent else ratings.valence
    known_changes = {(c.object, c.attribute) for c in base.state_changes}
    return Extraction(
        entities=all_entities,
        actions=tuple(dict.fromkeys(base.actions + actions.kept)),
        state_changes=base.state_changes + tuple(
            c for c in changes.kept if (c.object, c.attribute) not in known_changes),
        outcome=outcome,
        valence=final_valence,
        importance=ratings.importance,
        dropped=base.dropped + entities.dropped + actions.dropped + changes.dropped + unparsable,
    )


def _union_entities(first: Sequence[Entity], second: Sequence[Entity]) -> tuple[Entity, ...]:
    merged = {e.key: e for e in second}
    merged.update({e.key: e for e in first})  # the rule's name and type win
    order = [e.key for e in first] + [e.key for e in second if e.key not in {f.key for f in first}]
    return tuple(merged[k] for k in order)


class LlamaReasoner:
    """Relation inference and reflection with a local GGUF model.

    ``model`` is a GGUF path, or a LlamaExtractor whose loaded model (and lock)
    is then shared. ``max_texts`` memories, each cut to ``max_text_chars``, go
    into one reflection.
    """

    def __init__(self, model: str | Path | LlamaExtractor, *, n_ctx: int = 1024, n_threads: int = 2,
                 timeout_s: float = 20.0, max_tokens: int = 256, max_texts: int = 12,
                 max_text_chars: int = 240, loader: Callable[[], ChatBackend] | None = None) -> None:
        if max_tokens < 16 or max_texts < 1 or max_text_chars < 1:
            msg = (f'invalid reasoner options: max_tokens={max_tokens} (>= 16), '
                   f'max_texts={max_texts} (>= 1), max_text_chars={max_text_chars} (>= 1)')
            raise ConfigError(msg)
        if isinstance(model, LlamaExtractor):
            self.chat = model.chat
        else:
            self.chat = LlamaChat(model, n_ctx=n_ctx, n_threads=n_threads, timeout_s=timeout_s,
                                  loader=loader)
        self._max_tokens = max_tokens
        self._max_texts = max_texts
        self._max_text_chars = max_text_chars

    def relate(self, first: str, second: str) -> Relation:
        """How ``first`` relates to ``second``; kind None when the model sees no link."""
        limit = self._max_text_chars
        payload = self.chat.complete_json(prompts.relate_prompt(first[:limit], second[:limit]),
                                          prompts.RELATE_SCHEMA, max_tokens=32)
        relation = _field(payload, 'relation', str)
        if relation not in prompts.RELATIONS:
            msg = f'LLM output field relation is not one of {prompts.RELATIONS}: {relation!r}'
            raise ExtractionError(msg)
        confidence = _clamp(_number(payload, 'confidence') / prompts.CONFIDENCE_STEPS, 0.0, 1.0)
        kind = None if relation == 'none' else EdgeKind(relation)
        return Relation(kind=kind, confidence=confidence)

    def reflect(self, texts: Sequence[str]) -> list[Insight]:
        """Insights over the first ``max_texts`` of ``texts``, each tied to its evidence.

        An insight whose evidence is empty, out of range, or shares no word with the
        texts it cites is dropped.
        """
        window = [t[:self._max_text_chars] for t in texts[:self._max_texts]]
        if not window:
            return []
        payload = self.chat.complete_json(prompts.reflect_prompt(window),
                                          prompts.reflect_schema(len(window)),
                                          max_tokens=self._max_tokens)
        items = _field(payload, 'insights', list)
        if len(items) > prompts.MAX_INSIGHTS:
            msg = f'LLM output has more than {prompts.MAX_INSIGHTS} insights'
            raise ExtractionError(msg)
        insights: list[Insight] = []
        for item in items:
            if not isinstance(item, dict):
                msg = 'LLM output insight is not an object'
                raise ExtractionError(msg)
            text = str(_field(item, 'text', str)).strip()
            raw = _field(item, 'evidence', list)
            evidence = tuple(dict.fromkeys(
                i for i in raw if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(window)))
            cited = ' '.join(window[i] for i in evidence).lower()
            if text and evidence and set(_WORD.findall(text.lower())) & set(_WORD.findall(cited)):
                insights.append(Insight(text=text[:prompts.MAX_INSIGHT_CHARS], evidence=evidence))
        return insights


class UnavailableLlm:
    """Stands in for an LLM that could not be loaded: every call fails with the reason.

    The node keeps its fast path; units are marked ``failed`` (with this reason) and
    retried on the next start, when the model may be back.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        """Always fails: there is no model."""
        raise ExtractionError(self.reason)
