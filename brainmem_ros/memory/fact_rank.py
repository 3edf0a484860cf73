"""How the facts of a query's entities weigh the memories that are their evidence.

A memory that states where a thing is now ranks above one that states where it was; one
that states the value the query names ("did I put the keys in the *bowl*?") above both.
The facts are :mod:`brainmem_ros.memory.facts`'; this is the ranking's use of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from brainmem_ros.memory.entity_names import entity_key, names_match
from brainmem_ros.memory.facts import (
    CURRENT_FACTOR,
    NAMED_FACTOR,
    POSITION,
    STALE_FACTOR,
    Fact,
    FactLookup,
)


def fact_factors(facts: FactLookup | Sequence[Fact], unit_ids: Iterable[int],
                 query_entities: Sequence[str], *, as_of: float | None = None) -> dict[int, float]:
    """Score factor per candidate unit from the facts of the query's entities.

    Contract (for the ranking):

    * ``facts``: a :class:`FactLookup` (``FactStore(sqlite_store)``), asked once for
      the facts of ``query_entities``; or those facts already fetched.
    * ``unit_ids``: the candidates to rank. ``query_entities``: entity names found in
      the query text (as the extractor gives them; matched as in :func:`names_match`).
    * ``as_of``: the reference time (POSIX s); None means now, i.e. the open facts.
    * Returns a factor for **every** id in ``unit_ids``: 1.0 (neutral) unless the unit
      is evidence of a fact of a query entity. Position sightings (pose) are ignored:
      they are where things were seen, not what a memory states.
      For each query entity: if the query names one of its fact values ("did I put
      the keys in the *bowl*?"), the evidence of facts with that value gets
      ``NAMED_FACTOR`` and nothing is judged stale; otherwise evidence of a fact that
      holds at the reference time gets ``CURRENT_FACTOR`` (> 1) and evidence of facts
      that do not hold then gets ``STALE_FACTOR`` (< 1). A unit that is evidence of
      both gets the larger factor; factors of several entities multiply.
    * Pure and deterministic; no question words are looked at. Cost: one lookup of
      the entities' facts (indexed) plus O(evidence).

    >>> fact = Fact('door', 'state', 'open', 0.0, 5.0, (1,), 0.0, 'text', 0.8)
    >>> later = Fact('door', 'state', 'closed', 5.0, None, (2,), 5.0, 'text', 0.8)
    >>> fact_factors([fact, later], [1, 2, 3], ['the door'])
    {1: 0.75, 2: 1.25, 3: 1.0}
    """
    ids = list(dict.fromkeys(int(i) for i in unit_ids))
    factors = dict.fromkeys(ids, 1.0)
    names = [n for n in query_entities if entity_key(n)]
    if not ids or not names:
        return factors
    known = list(facts) if isinstance(facts, Sequence) else facts.facts_about(names, skip=(POSITION,))
    wanted = set(ids)
    query_keys = {entity_key(n) for n in names}
    by_entity: dict[str, list[Fact]] = {}
    for fact in known:
        key = entity_key(fact.entity)
        if fact.attribute != POSITION and any(names_match(n, key) for n in names):
            by_entity.setdefault(key, []).append(fact)
    for entity_facts in by_entity.values():
        named = [f for f in entity_facts if any(names_match(q, entity_key(f.value)) for q in query_keys)]
        best: dict[int, float] = {}
        if named:
            for fact in named:
                for uid in wanted.intersection(fact.evidence):
                    best[uid] = NAMED_FACTOR
        else:
            for fact in entity_facts:
                holds = fact.current if as_of is None else fact.valid_at(as_of)
                factor = CURRENT_FACTOR if holds else STALE_FACTOR
                for uid in wanted.intersection(fact.evidence):
                    best[uid] = max(best.get(uid, 0.0), factor)
        for uid, factor in best.items():
            factors[uid] *= factor
    return factors
