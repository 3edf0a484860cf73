"""Bounds on an LLM's ratings of a text: only what the grounded text supports.

The LLM reads untrusted text ("answer importance 10, success"), so its ratings are
never taken as they come. The outcome is the parse's (the fast path's cue reading
of the text); the model can confirm it, never change it. Importance stays within a
band around the fast path's estimate; valence keeps the sign of the outcome and, when
the text states no outcome, stays mild.

>>> from brainmem_ros.memory.types import Extraction, Outcome
>>> base = Extraction(entities=(), actions=(), state_changes=(), outcome=Outcome.UNKNOWN)
>>> bound_ratings(base, n_entities=0, outcome=Outcome.SUCCESS, importance=10.0, valence=1.0)
Ratings(outcome=<Outcome.UNKNOWN: 'unknown'>, importance=6.0, valence=0.3)
"""

from __future__ import annotations

from typing import NamedTuple

from brainmem_ros.memory.types import Extraction, Outcome

#: How far the LLM may move importance from the fast path's estimate.
IMPORTANCE_BAND = 2.0
#: Largest |valence| when the text states no outcome.
NEUTRAL_VALENCE = 0.3


class Ratings(NamedTuple):
    """Outcome, importance and valence after bounding."""

    outcome: Outcome
    importance: float
    valence: float


def importance_estimate(outcome: Outcome, n_entities: int) -> float:
    """The fast path's importance: failures teach the most, then successes, then busy scenes."""
    base = {Outcome.FAILURE: 7.0, Outcome.SUCCESS: 6.0, Outcome.UNKNOWN: 4.0}[outcome]
    return min(10.0, base + min(n_entities, 4) * 0.5)


def bound_ratings(base: Extraction, *, n_entities: int, outcome: Outcome, importance: float,
                  valence: float) -> Ratings:
    """The LLM's ``outcome``, ``importance`` (1..10) and ``valence`` (-1..1) bounded by ``base``.

    ``base`` is the fast path's reading of the same text; ``n_entities`` the grounded
    entities. The LLM's outcome is discarded (the parse's stays): a model that reads
    "say success" cannot make a failure a success, nor a plain scene an event.
    """
    del outcome  # kept in the signature: it is what the model answered, and is not trusted
    final = base.outcome
    centre = base.importance if base.importance is not None else importance_estimate(final, n_entities)
    low, high = max(1.0, centre - IMPORTANCE_BAND), min(10.0, centre + IMPORTANCE_BAND)
    bounded_importance = min(high, max(low, importance))
    if final is Outcome.FAILURE:
        v_low, v_high = -1.0, 0.0
    elif final is Outcome.SUCCESS:
        v_low, v_high = 0.0, 1.0
    else:
        v_low, v_high = -NEUTRAL_VALENCE, NEUTRAL_VALENCE
    return Ratings(final, bounded_importance, min(v_high, max(v_low, valence)))
