"""One validated, typed configuration for the memory core.

The ROS layer declares the same names as node parameters (``retrieval.w_act`` ...)
and builds this object with :func:`MemoryConfig.from_mapping`, so a value is
checked in exactly one place whether it comes from YAML, a parameter or Python.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from brainmem_ros.errors import ConfigError


@dataclass(frozen=True)
class Bound:
    """Documented range of a numeric option (inclusive)."""

    low: float
    high: float
    description: str


def _check(section: object) -> None:
    for f in fields(section):  # type: ignore[arg-type]
        bound = f.metadata.get('bound')
        value = getattr(section, f.name)
        if bound is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            msg = f'{type(section).__name__}.{f.name} must be a number, got {value!r}'
            raise ConfigError(msg)
        if not math.isfinite(value) or not bound.low <= value <= bound.high:
            msg = (f'{_SECTION_NAMES[type(section)]}.{f.name}={value!r} is out of range '
                   f'[{bound.low}, {bound.high}]: {bound.description}')
            raise ConfigError(msg)


def opt(default: float, low: float, high: float, description: str) -> Any:
    """A numeric option with its range and description (also used for ROS descriptors)."""
    return field(default=default, metadata={'bound': Bound(low, high, description)})


def text(default: str, description: str) -> Any:
    """A string option with its description."""
    return field(default=default, metadata={'description': description})


@dataclass(frozen=True)
class RetrievalConfig:
    """Recall, spreading activation and the final ranking (docs/retrieval.md explains it).

    Defaults were chosen on the LoCoMo development split by cross-validation over its
    conversations (``python -m bench.eval_recall --tune``), not per dataset rule.
    """

    w_vector: float = opt(0.30, 0.0, 1.0, 'share of the vector (cosine) evidence in relevance')
    w_lexical: float = opt(0.70, 0.0, 1.0, 'share of the lexical (BM25) evidence in relevance')
    w_entity: float = opt(0.0, 0.0, 1.0, 'share of the entity-index evidence in relevance')
    w_act: float = opt(0.80, 0.0, 1.0, 'share of its missing evidence a memory gets from activation')
    part_agreement: float = opt(0.4, 0.0, 1.0, 'share of a memory\'s vector relevance taken from its '
                                'weighted mean cosine over query, goal and state (the rest: the best part)')
    vector_span: float = opt(0.25, 0.0, 2.0, 'cosine below the best candidate that counts as no '
                             'vector evidence (at least; more when the candidates spread wider)')
    vector_candidates: int = opt(50, 10, 5000, 'vector neighbours taken as candidates (per 10 results asked)')
    lexical_candidates: int = opt(50, 0, 5000, 'BM25 matches taken as candidates (per 10 results asked)')
    lexical_ties: int = opt(5, 0, 5000, 'the best BM25 matches counting at most this many of each run of '
                            'equal scores (a routine the query\'s words cannot tell apart) are also '
                            'candidates (0: only the best lexical_candidates)')
    entity_candidates: int = opt(50, 0, 5000, 'units per query entity taken as candidates')
    lexical_pool_length: float = opt(1.0, 0.0, 1.0, 'BM25 compares a memory\'s length with the mean of the '
                                     'memories matching the query (1) or of the whole store (0, FTS5\'s own)')
    lexical_pool_idf: float = opt(1.0, 0.0, 1.0, 'BM25 weighs a query word common among the memories '
                                  'matching the query less, though rare in the store (1), or by its IDF in '
                                  'the store alone (0)')
    lexical_synonyms: float = opt(0.4, 0.0, 1.0, 'a synonym of a query word (WordNet) is also searched and '
                                  'counts for this share of the word it stands for (0: no synonyms)')
    lexical_places: float = opt(0.5, 0.0, 1.0, 'share of its weight a query word naming a thing ("clean the '
                                'stove") loses in a memory naming it only as a place ("put the broom on the '
                                'stove"); 0: every match counts alike')
    lexical_max_df: int = opt(50000, 1, 10**9, 'query words in this many memories or more are left out of '
                              'the lexical search (their newest matches would crowd out the rare words\')')
    spread_floor: float = opt(0.3, 0.0, 1.0, 'candidates with less than this share of the best '
                              'evidence do not spread activation')
    hops: int = opt(2, 0, 4, 'spreading activation hops')
    hop_decay: float = opt(0.8, 0.0, 1.0, 'activation multiplier per hop')
    activation_threshold: float = opt(0.05, 0.0, 1.0, 'activation below this stops spreading')
    fanout: int = opt(12, 1, 200, 'edges followed per unit per hop (strongest first)')
    max_activated: int = opt(150, 10, 100000, 'cap on units reached by activation per query (per 10 '
                             'results asked)')
    recency_lambda: float = opt(0.005, 0.0, 10.0, 'recency = exp(-lambda x hours since last access)')
    prior_recency: float = opt(0.04, 0.0, 0.25, 'score x (1 + this x (2 recency - 1))')
    prior_importance: float = opt(0.04, 0.0, 0.25, 'score x (1 + this x (importance / 5 - 1))')
    prior_strength: float = opt(0.10, 0.0, 0.25, 'score x (1 + this x (strength - 1)); strength in [0, 2]')
    prior_valence: float = opt(0.03, 0.0, 0.25, 'score x (1 + this x valence)')
    diversity: float = opt(0.5, 0.0, 1.0, 'score x (1 - this x redundancy): how far a near-copy of a '
                           'memory ranked above it steps back')
    redundancy_cosine: float = opt(0.75, 0.0, 0.999, 'cosine from which a memory counts as a near-copy of '
                                   'one ranked above it (redundancy) or of another candidate '
                                   '(typicality); the weight of a copy rises to 1 at cosine 1')
    typicality: float = opt(0.3, 0.0, 5.0, 'score x 1 / (1 + this x ln(1 + copies)), copies: the other '
                            'candidates that are near-copies of a memory (above redundancy_cosine) and '
                            'score about as high')
    prior_facts: float = opt(0.10, 0.0, 0.25, 'score x ~(1 +- this) for a memory stating the value an entity '
                             'of the query has now (or as_of) / no longer has')
    filter_exact_limit: int = opt(4096, 0, 10**6, 'filtered queries matching at most this many units '
                                  'compare the query with each of their vectors exactly')
    filter_select_limit: int = opt(100000, 0, 10**7, 'up to this many matching units, the vector index '
                                   'searches only them; beyond, it oversamples and filters')
    default_top_k: int = opt(10, 1, 1000, 'top_k when the request gives none')
    max_top_k: int = opt(100, 1, 10000, 'largest top_k a request may ask for')

    def __post_init__(self) -> None:
        priors = (self.prior_recency + self.prior_importance + self.prior_strength + self.prior_valence
                  + self.prior_facts)
        if priors > 0.5:
            msg = (f'retrieval priors sum to {priors:.3g} (> 0.5): they are bounded modulations '
                   'of relevance and must not be able to bury a clearly better match')
            raise ConfigError(msg)
        if self.w_vector + self.w_lexical + self.w_entity <= 0:
            msg = 'retrieval.w_vector, w_lexical and w_entity are all 0: nothing would rank'
            raise ConfigError(msg)
        if self.default_top_k > self.max_top_k:
            msg = (f'retrieval.default_top_k={self.default_top_k} is larger than '
                   f'retrieval.max_top_k={self.max_top_k}')
            raise ConfigError(msg)


@dataclass(frozen=True)
class LinkConfig:
    """How a new unit is linked into the graph (all candidates come from indexes)."""

    temporal_window_s: float = opt(600.0, 0.0, 1e7, 'same-episode units closer than this are linked')
    temporal_links: int = opt(2, 0, 20, 'previous units of the episode linked to a new one')
    temporal_lag_decay: float = opt(1.0, 0.0, 1.0, 'temporal link to the k-th previous unit of an episode '
                                    'x this^(k-1): contiguity falls with lag')
    entity_links: int = opt(8, 0, 100, 'most recent units linked per shared entity')
    similar_links: int = opt(3, 0, 50, 'vector neighbours linked as similar')
    similar_threshold: float = opt(0.55, 0.0, 1.0, 'cosine above which neighbours are linked')
    max_links: int = opt(24, 1, 500, 'fan-out cap of links created for one unit')
    in_memory_graph: bool = field(default=True, metadata={
        'description': "keep each unit's strongest retrieval.fanout edges in RAM "
                       '(157 bytes per unit at fanout 12); false: read them from SQLite per hop'})


@dataclass(frozen=True)
class DynamicsConfig:
    """Strength, decay, marginalization, reflection and near-duplicates."""

    reward_rate: float = opt(0.3, 0.0, 1.0, 'fraction of the gap to the bound a reward moves strength')
    valence_rate: float = opt(0.3, 0.0, 1.0, 'how far a reward pulls valence towards its sign')
    hebbian_rate: float = opt(0.2, 0.0, 1.0, 'co-use edge weight gain per joint reinforcement')
    decay_per_day: float = opt(0.02, 0.0, 10.0, 'strength decay rate (exp) per day of consolidation time')
    access_gain: float = opt(0.02, 0.0, 1.0, 'strength gained per retrieval, folded in at consolidation')
    marginalize_below: float = opt(0.1, 0.0, 2.0, 'unprotected units weaker than this leave the hot index')
    prune_below: float = opt(0.02, 0.0, 1.0, 'edges weaker than this are pruned')
    edge_decay_per_day: float = opt(0.01, 0.0, 10.0, 'edge weight decay rate per day')
    replay_count: int = opt(0, 0, 1000, 'mid-strength, well-connected units replayed per cycle')
    reflect_threshold: float = opt(150.0, 1.0, 1e6, 'summed importance that triggers a reflection')
    reflect_window: int = opt(30, 2, 1000, 'most recent units considered by a reflection')
    dedup_cosine: float = opt(0.95, 0.5, 1.0, 'near-duplicate cosine threshold')
    dedup_window_s: float = opt(120.0, 0.0, 1e6, 'near-duplicates must be this close in time')
    dedup_radius: float = opt(0.5, 0.0, 1e6, 'and this close in space (metres, same frame)')


@dataclass(frozen=True)
class StoreConfig:
    """Persistence."""

    synchronous: str = text('FULL', 'SQLite synchronous: FULL (survives power loss) or NORMAL')
    busy_timeout_ms: int = opt(5000, 0, 600000, 'SQLite busy timeout')
    index_save_every: int = opt(1000, 1, 10**9, 'changes of the vector index after which it is saved, '
                                'once the store has had no request for 0.5 s (and at close)')
    max_text_bytes: int = opt(4096, 16, 1 << 20, 'longest observation text accepted (UTF-8 bytes)')
    stamp_future_tolerance_s: float = opt(86400.0, 0.0, 1e9, 'observations stamped further ahead of the '
                                          "memory's clock are refused (the node first applies its own "
                                          'stamp_future_tolerance_s to message stamps)')
    vector_cache: bool = field(default=True, metadata={
        'description': 'hold unit vectors in memory as float16 (768 B a unit at 384 dimensions), '
                       'read in after opening: Retrieve then reads none from disk'})


@dataclass(frozen=True)
class EncoderConfig:
    """Models; empty paths resolve to the packaged defaults in the model cache."""

    model_dir: str = text('', 'model cache directory ("" = default cache)')
    embedder_model: str = text('', 'ONNX sentence-encoder file ("" = all-MiniLM-L6-v2, dynamic int8)')
    tokenizer: str = text('', 'tokenizer.json of the encoder ("" = packaged)')
    embedder_output: str = text('', 'ONNX output to pool ("" = the first (batch, tokens, dim) output, '
                                'else the first (batch, dim) one)')
    max_tokens: int = opt(128, 8, 4096, 'tokens per text fed to the encoder')
    threads: int = opt(1, 1, 64, 'ONNX Runtime intra-op threads')
    query_threads: int = opt(0, 0, 64, 'ONNX Runtime intra-op threads of a second session for '
                             "Retrieve's texts (0: Retrieve shares the first)")
    batch_size: int = opt(1, 1, 4096, 'texts per encoder call (1: a vector never depends on its batch)')
    parallel_calls: int = opt(1, 1, 64, 'encoder calls run at once for several texts (query, goal and '
                              'state; a batch of observations)')
    llm_enabled: bool = field(default=False, metadata={'description': 'enrich units with the LLM'})
    llm_model: str = text('', 'GGUF file of the extractor LLM ("" = packaged Gemma 3 270M)')
    llm_threads: int = opt(1, 1, 64, 'llama.cpp threads (1 leaves a core to perception on small robots)')
    llm_timeout_s: float = opt(30.0, 1.0, 3600.0, 'LLM call timeout')
    queue_size: int = opt(256, 1, 1 << 20, 'enrichment queue bound; a full queue skips enrichment')
    relation_candidates: int = opt(3, 0, 20, 'candidate pairs per unit for relation inference')
    relation_threshold: float = opt(0.6, 0.0, 1.0, 'confidence above which an inferred relation is kept')


@dataclass(frozen=True)
class MemoryConfig:
    """Everything the memory core can be told."""

    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    links: LinkConfig = field(default_factory=LinkConfig)
    dynamics: DynamicsConfig = field(default_factory=DynamicsConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    encoder: EncoderConfig = field(default_factory=EncoderConfig)

    def __post_init__(self) -> None:
        for section in (self.retrieval, self.links, self.dynamics, self.store, self.encoder):
            _check(section)
        if self.store.synchronous not in ('FULL', 'NORMAL', 'EXTRA'):
            msg = f'store.synchronous={self.store.synchronous!r} must be FULL, NORMAL or EXTRA'
            raise ConfigError(msg)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], *, base: MemoryConfig | None = None) -> MemoryConfig:
        """Build from flat ``section.name`` keys; unknown keys and bad types are refused."""
        base = base or cls()
        updates: dict[str, dict[str, Any]] = {}
        for key, value in values.items():
            section, _, name = key.partition('.')
            sub = getattr(base, section, None) if section in _SECTIONS else None
            if sub is None or name not in {f.name for f in fields(sub)}:
                msg = f'unknown memory option {key!r}'
                raise ConfigError(msg)
            updates.setdefault(section, {})[name] = coerce(key, getattr(sub, name), value)
        return dataclasses.replace(
            base, **{s: dataclasses.replace(getattr(base, s), **u) for s, u in updates.items()})

    def flat(self) -> dict[str, Any]:
        """All options as ``section.name`` → value."""
        return {f'{s}.{f.name}': getattr(getattr(self, s), f.name)
                for s in _SECTIONS for f in fields(getattr(self, s))}


def describe() -> dict[str, tuple[Any, str, Bound | None]]:
    """``section.name`` → (default, description, bound) for every option."""
    out: dict[str, tuple[Any, str, Bound | None]] = {}
    default = MemoryConfig()
    for s in _SECTIONS:
        for f in fields(getattr(default, s)):
            bound = f.metadata.get('bound')
            desc = bound.description if bound else f.metadata.get('description', '')
            out[f'{s}.{f.name}'] = (getattr(getattr(default, s), f.name), desc, bound)
    return out


def coerce(key: str, current: Any, value: Any) -> Any:
    """``value`` as the type of ``current`` (the option's default), or ConfigError naming ``key``."""
    # Parameters from YAML give 1 where 1.0 was meant; never the other way round.
    if isinstance(current, bool):
        if not isinstance(value, bool):
            msg = f'{key} must be true or false, got {value!r}'
            raise ConfigError(msg)
        return value
    if isinstance(current, int):
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            msg = f'{key} must be an integer, got {value!r}'
            raise ConfigError(msg)
        return value
    if isinstance(current, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            msg = f'{key} must be a number, got {value!r}'
            raise ConfigError(msg)
        return float(value)
    if not isinstance(value, str):
        msg = f'{key} must be a string, got {value!r}'
        raise ConfigError(msg)
    return value


_SECTIONS = ('retrieval', 'links', 'dynamics', 'store', 'encoder')
_SECTION_NAMES: dict[type, str] = {
    RetrievalConfig: 'retrieval', LinkConfig: 'links', DynamicsConfig: 'dynamics',
    StoreConfig: 'store', EncoderConfig: 'encoder',
}
