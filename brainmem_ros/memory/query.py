"""A retrieval request, and what is derived from its text alone.

The request's parts (query, goal, state) and their weights, its filter, the words sent
to the lexical index and their BM25 ideal, the entity keys it may mention, and the
exact filter check on a unit: everything the ranking needs to know about the question
before it looks at a memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from brainmem_ros.memory.lexicon import WORD, query_stopwords
from brainmem_ros.memory.store import UnitHead
from brainmem_ros.memory.store.fts_idf import idf
from brainmem_ros.memory.types import Pose, UnitFilter, UnitType, normalise_name

# Weight of each query part in the vector evidence: the query says what to recall;
# the goal and the current state colour it.
_PART_WEIGHTS = (1.0, 0.85, 0.6)
#: Content words of a query sent to the lexical index.
MAX_TERMS = 32


@dataclass(frozen=True)
class Query:
    """A validated retrieval request."""

    query: str
    goal: str = ''
    state: str = ''
    top_k: int = 10
    episode_id: str | None = None
    types: frozenset[UnitType] | None = None
    since: float | None = None
    until: float | None = None
    near: Pose | None = None
    radius: float | None = None
    include_marginalized: bool = False
    as_of: float | None = None

    @property
    def parts(self) -> list[tuple[str, float]]:
        """Non-empty (text, weight) parts of the query."""
        return [(t, w) for t, w in zip((self.query, self.goal, self.state), _PART_WEIGHTS, strict=True)
                if t.strip()]

    @cached_property
    def text(self) -> str:
        """All parts as one text: what lexical and entity recall match."""
        return ' '.join(t for t, _ in self.parts)

    @cached_property
    def entity_keys(self) -> list[str]:
        """The entity keys the text may mention (entity recall and fact factors use them)."""
        return entity_mentions(self.text)

    @cached_property
    def filter(self) -> UnitFilter:
        """The filter the request's options make."""
        return UnitFilter(episode_id=self.episode_id, types=self.types, since=self.since,
                          until=self.until, as_of=self.as_of, near=self.near, radius=self.radius,
                          include_marginalized=self.include_marginalized)


# Candidate counts of RetrievalConfig are given for this many results (per_request).
_PER = 10


def per_request(count: int, q: Query) -> int:
    """A candidate count of the config (given per 10 results) for ``q.top_k`` results.

    The defaults were measured at top_k 10; a planner asking for 50 memories needs a
    deeper candidate list for the 50th to be as good a pick as the 10th is.
    """
    return count if q.top_k <= _PER else -(-count * q.top_k // _PER)


def fts_phrase(word: str) -> str:
    """``word`` as an FTS5 phrase (quoted: never FTS syntax)."""
    return '"' + word.replace('"', '') + '"'


def fts_expression(words: Sequence[str]) -> str:
    """An FTS5 OR-query of ``words``."""
    return ' OR '.join(fts_phrase(w) for w in words)


def ideal_bm25(counts: Mapping[str, int], total: int) -> float:
    """The BM25 of a memory of average length holding each query term once.

    Lexical evidence is BM25 over this, so a memory matching only the query's common
    words scores low even when it is the best lexical match. Terms no memory holds are
    left out (they cannot tell memories apart), but the ideal is never below the IDF of
    a word only one memory holds: a query whose one known word is common ("the user")
    has weak lexical evidence, however well a memory matches that word.
    """
    return max(sum(idf(df, total) for df in counts.values()), idf(1, total), 1e-9)


def entity_mentions(text: str, max_words: int = 3) -> list[str]:
    """Candidate entity keys in ``text``: its 1..3-word n-grams, normalised."""
    stop = query_stopwords()
    words = [w.lower() for w in WORD.findall(text)]
    grams: list[str] = []
    for n in range(max_words, 0, -1):
        for i in range(len(words) - n + 1):
            gram = words[i:i + n]
            if gram[0] in stop or gram[-1] in stop:
                continue
            grams.append(normalise_name(' '.join(gram)))
    return list(dict.fromkeys(g for g in grams if g))


def passes(unit: UnitHead, q: Query, *, seeded: bool = True) -> bool:
    """The filter, checked exactly on a unit (pose distance, marginalization)."""
    if unit.type not in q.filter.allowed_types:
        return False
    if q.episode_id is not None and unit.episode_id != q.episode_id:
        return False
    if q.since is not None and unit.stamp < q.since:
        return False
    if q.until is not None and unit.stamp > q.until:
        return False
    if q.as_of is not None:
        if unit.stamp > q.as_of or unit.valid_from > q.as_of:
            return False
        if unit.valid_until is not None and unit.valid_until <= q.as_of:
            return False
    if q.near is not None and q.radius is not None:
        if unit.pose is None or unit.pose.distance(q.near) > q.radius:
            return False
    # Marginalized units stay reachable through the graph, not through recall.
    return not (unit.marginalized and seeded and not q.include_marginalized)


def same_text_key(text: str) -> str:
    """Texts equal up to case, spacing and punctuation share this key."""
    return ' '.join(w.lower() for w in WORD.findall(text))
