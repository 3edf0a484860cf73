"""Plain value objects shared by the memory core, the encoders and the ROS layer."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from functools import cache
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from brainmem_ros.errors import BrainMemError, InvalidInputError
from brainmem_ros.memory.wordlists import word_list


class UnitType(str, Enum):
    """What kind of experience a memory unit records."""

    OBSERVATION = 'observation'
    ACTION = 'action'
    OUTCOME = 'outcome'
    PLAN = 'plan'
    REFLECTION = 'reflection'

    @classmethod
    def parse(cls, value: object) -> UnitType:
        """Return the member for ``value`` or raise InvalidInputError naming it."""
        if isinstance(value, UnitType):
            return value
        if not isinstance(value, str):
            msg = f'a memory type must be a string, got {type(value).__name__}'
            raise InvalidInputError(msg)
        try:
            return cls(value.strip().lower() or 'observation')
        except ValueError:
            allowed = ', '.join(m.value for m in cls)
            msg = f'unknown memory type {value!r} (expected one of: {allowed})'
            raise InvalidInputError(msg) from None


class EdgeKind(str, Enum):
    """Why two memory units are linked."""

    TEMPORAL = 'temporal'
    ENTITY = 'entity'
    SIMILAR = 'similar'
    PRECONDITION = 'precondition'
    CAUSES = 'causes'
    ANALOGY = 'analogy'
    OPPOSITE = 'opposite'
    SUPERSEDES = 'supersedes'
    EVIDENCE = 'evidence'
    CO_USE = 'co_use'


class Outcome(str, Enum):
    """Outcome cue found in an observation."""

    SUCCESS = 'success'
    FAILURE = 'failure'
    UNKNOWN = 'unknown'


class Enrichment(str, Enum):
    """State of a unit's asynchronous LLM enrichment."""

    NONE = 'none'          # enrichment disabled or not wanted
    PENDING = 'pending'    # queued (persisted, resumed after a restart)
    DONE = 'done'
    SKIPPED = 'skipped'    # queue was full: the fast-path unit stands as it is
    FAILED = 'failed'      # model missing, timeout or invalid output; retried later


def _finite(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        msg = f'{name} must be a number, got {type(value).__name__} {value!r}'[:200]
        raise InvalidInputError(msg)
    if not math.isfinite(value):
        msg = f'{name} must be a finite number, got {value!r}'
        raise InvalidInputError(msg)
    return float(value)


@dataclass(frozen=True)
class Pose:
    """A position (and orientation) in a named frame, e.g. ``map``."""

    x: float
    y: float
    z: float = 0.0
    qx: float = 0.0
    qy: float = 0.0
    qz: float = 0.0
    qw: float = 1.0
    frame: str = 'map'

    def __post_init__(self) -> None:
        for name in ('x', 'y', 'z', 'qx', 'qy', 'qz', 'qw'):
            object.__setattr__(self, name, _finite(f'pose.{name}', getattr(self, name)))

    def distance(self, other: Pose) -> float:
        """Euclidean distance; poses in different frames are infinitely far apart."""
        if self.frame != other.frame:
            return math.inf
        return math.dist((self.x, self.y, self.z), (other.x, other.y, other.z))


@dataclass(frozen=True)
class Entity:
    """Something a memory is about: an object, a place, a person, a tool."""

    name: str
    type: str = 'object'
    attributes: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        """Normalised name used by the entity index."""
        return normalise_name(self.name)


def normalise_name(name: str) -> str:
    """Lower-case, single-spaced name without a leading article."""
    words = name.lower().replace('_', ' ').split()
    if words and words[0] in _name_articles():
        words = words[1:]
    return ' '.join(words)


def speaker_label(words: Sequence[str]) -> bool:
    """Words that can name who speaks before a colon: one or two, each capitalised and
    alphabetic ("Lucía", "Mr Lee"). One rule for the parse ("Lucía: it's in my bag") and for
    the text (the conversation's facts), so that both layers agree on who said it."""
    return 0 < len(words) <= 2 and all(w.isalpha() and w.istitle() for w in words)


def unowned(name: str) -> str:
    """``name`` without the owner before it: "sam's key" -> "key"."""
    return _OWNER.sub('', name)


# An owner before a thing's normalised name ("sam's key").
_OWNER = re.compile(r"^[a-z]+'s ")


@cache
def _name_articles() -> frozenset[str]:
    return word_list('fact_words.txt', 'name articles')


@dataclass(frozen=True)
class StateChange:
    """``object.attribute`` went from ``before`` to ``after``."""

    object: str
    attribute: str
    before: str = ''
    after: str = ''


@dataclass(frozen=True)
class Extraction:
    """Structured content pulled out of an observation's text."""

    entities: tuple[Entity, ...] = ()
    actions: tuple[str, ...] = ()
    state_changes: tuple[StateChange, ...] = ()
    outcome: Outcome = Outcome.UNKNOWN
    valence: float | None = None
    importance: float | None = None
    dropped: int = 0  # items the extractor proposed that were not grounded in the text


@dataclass(frozen=True)
class MemoryUnit:
    """One remembered experience, as stored."""

    id: int
    stamp: float
    text: str
    type: UnitType = UnitType.OBSERVATION
    episode_id: str = ''
    source: str = ''
    entities: tuple[Entity, ...] = ()
    actions: tuple[str, ...] = ()
    state_changes: tuple[StateChange, ...] = ()
    outcome: Outcome = Outcome.UNKNOWN
    valence: float = 0.0
    importance: float = 5.0
    strength: float = 1.0
    access_count: int = 0
    last_access: float = 0.0
    protected: bool = False
    marginalized: bool = False
    pose: Pose | None = None
    valid_from: float = 0.0
    valid_until: float | None = None
    repeats: int = 0
    enrichment: Enrichment = Enrichment.NONE


class Edge(NamedTuple):
    """A weighted, typed link between two units (``src`` → ``dst``).

    A named tuple, not a dataclass: spreading activation reads thousands per Retrieve
    and a tuple is built in half the time (0.24 vs 0.56 us measured).
    """

    src: int
    dst: int
    kind: EdgeKind
    weight: float


@dataclass(frozen=True)
class ScoreParts:
    """The terms of a retrieved memory's score (docs/retrieval.md gives the formula).

    ``score = relevance x prior x (1 - typicality) x (1 - diversity x redundancy)``;
    ``relevance = evidence + w_act x max(0, activation - evidence)``, where evidence is the
    weighted sum of ``vector``, ``lexical`` and ``entity``.
    """

    relevance: float  # what ranks: the recall evidence plus what linked memories pass on
    recency: float  # exp(-lambda x hours since last access), in [0, 1]
    importance: float  # importance / 10, in [0, 1]
    activation: float  # activation received from linked memories, in [0, 1]
    vector: float = 0.0  # cosine to the query, relative to the best candidate, in [0, 1]
    lexical: float = 0.0  # BM25 relative to the best lexical match, in [0, 1]
    entity: float = 0.0  # share of the query's known entities the memory mentions, in [0, 1]
    prior: float = 1.0  # product of the bounded priors (recency, importance, strength, valence, facts)
    typicality: float = 0.0  # share of the score lost for near-copies scoring as high, in [0, 1)
    redundancy: float = 0.0  # how near a copy of a memory ranked above this one is, in [0, 1]


#: Types recalled when a query names none: derived units (reflections) are asked for by type.
ORDINARY_TYPES = frozenset({UnitType.OBSERVATION, UnitType.ACTION, UnitType.OUTCOME, UnitType.PLAN})


@dataclass(frozen=True)
class UnitFilter:
    """Which units a Retrieve may return; applied before any candidate list is cut."""

    episode_id: str | None = None
    types: frozenset[UnitType] | None = None  # None: ORDINARY_TYPES
    since: float | None = None
    until: float | None = None
    as_of: float | None = None
    near: Pose | None = None
    radius: float | None = None
    include_marginalized: bool = False

    @property
    def allowed_types(self) -> frozenset[UnitType]:
        """The unit types this filter lets through."""
        return self.types if self.types is not None else ORDINARY_TYPES

    @property
    def narrows(self) -> bool:
        """True when the filter keeps only part of the ordinary memories."""
        return (self.episode_id is not None or self.since is not None or self.until is not None
                or self.as_of is not None or self.near is not None
                or (self.types is not None and not self.types >= ORDINARY_TYPES))


@dataclass(frozen=True)
class ScoredMemory:
    """A retrieved unit with its final score, the score's parts and its activation path."""

    unit: MemoryUnit
    score: float
    parts: ScoreParts
    path: tuple[int, ...] = field(default=())


@dataclass(frozen=True)
class MemoryEvent:
    """Something that happened to memories, for observers (the ROS events topic)."""

    kind: str  # created | merged | enriched | reinforced | marginalized | restored | protected | ...
    ids: tuple[int, ...]
    detail: str = ''


@dataclass(frozen=True)
class StoreResult:
    """What :meth:`BrainMem.store` did: a new unit, or a repeat folded into an existing one."""

    unit: MemoryUnit
    created: bool
    message: str


@dataclass(frozen=True)
class MemoryStats:
    """Counts and sizes of a memory."""

    units: int
    active_units: int
    marginalized_units: int
    protected_units: int
    edges: int
    queue_depth: int
    index_kind: str
    index_size: int
    index_status: str
    store_bytes: int
    enrichment: dict[str, int]


@dataclass(frozen=True)
class ObservationInput:
    """One observation to store, as given (validated by BrainMem.store_many)."""

    text: str
    stamp: float | int | datetime | None = None
    episode_id: str | None = None
    source: str | None = None
    type: str | UnitType = 'observation'
    pose: Pose | None = None
    entities: tuple[str | Entity, ...] = ()
    actions: tuple[str, ...] = ()
    importance: float | None = None
    valence: float | None = None


@dataclass(frozen=True)
class PreparedBatch:
    """Observations validated, extracted and embedded, not yet written (BrainMem.prepare).

    ``results`` holds each refused item's error (None for the others); ``drafts`` the
    accepted items as (position, unit with id 0); ``vectors`` one row per draft.
    """

    results: list[StoreResult | BrainMemError | None]
    drafts: list[tuple[int, MemoryUnit]]
    vectors: npt.NDArray[np.float32] | None
