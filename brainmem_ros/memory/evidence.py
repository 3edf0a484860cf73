"""What hybrid recall found for a query, and its evidence put on one scale.

Each list's raw scale differs (a cosine lives in 0.3-0.7, BM25 is unbounded), so each
part is put on [0, 1] before they are weighed: the cosine relative to the best vector
candidate, BM25 and entity weight relative to what the query's terms could give
(:mod:`brainmem_ros.memory.retrieval` explains the ranking).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from brainmem_ros.memory.config import RetrievalConfig


@dataclass
class Candidates:
    """What hybrid recall found, per unit id (the cosine still to be put on a scale)."""

    cosine: dict[int, float]  # best weighted cosine over the query parts
    lexical: dict[int, float]  # BM25 over the ideal BM25 of the query, in [0, 1]
    entity: dict[int, float]  # share of the query's entity weight (IDF) mentioned, in [0, 1]
    cosine_floor: float  # the cosine of the last vector candidate: "no vector evidence"

    @property
    def ids(self) -> list[int]:
        """Every candidate id, once."""
        return list(dict.fromkeys([*self.cosine, *self.lexical, *self.entity]))


class EvidenceScale:
    """The evidence shares of this query, and the cosine put on [0, 1] from its candidates."""

    def __init__(self, cosine: Mapping[int, float], found: Candidates, cfg: RetrievalConfig) -> None:
        total = cfg.w_vector + cfg.w_lexical + cfg.w_entity
        self.w_vector = cfg.w_vector / total
        self.w_lexical = cfg.w_lexical / total
        self.w_entity = cfg.w_entity / total
        if not found.lexical:
            # No lexical evidence at all (no content word matched): the vector decides.
            self.w_vector, self.w_lexical = self.w_vector + self.w_lexical, 0.0
        if not found.entity:
            self.w_vector, self.w_entity = self.w_vector + self.w_entity, 0.0
        self._best_cos = max(found.cosine.values(), default=max(cosine.values(), default=1.0))
        # Near-identical candidates (a month of the same routine) must not spread over the
        # whole [0, 1]: the scale spans at least ``vector_span`` of cosine.
        self._floor = min(found.cosine_floor, self._best_cos - cfg.vector_span)
        self._span = max(self._best_cos - self._floor, 1e-9)
        self._lexical = found.lexical
        self._entity = found.entity

    def vector(self, cos: float) -> float:
        """A cosine on [0, 1]: 0 at the floor of the vector list, 1 at its best."""
        return min(1.0, max(0.0, (cos - self._floor) / self._span))

    def vectors(self, cos: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """:meth:`vector` of each cosine of an array (one array operation for a Retrieve's heads)."""
        out: npt.NDArray[np.float64] = np.clip((cos - self._floor) / self._span, 0.0, 1.0)
        return out

    def lexical(self, uid: int) -> float:
        """BM25 of the unit over the ideal BM25 of the query (0 without a match)."""
        return self._lexical.get(uid, 0.0)

    def entity(self, uid: int) -> float:
        """The IDF-weighted share of the query's entities the unit mentions."""
        return self._entity.get(uid, 0.0)

    def evidence(self, uid: int, cos: float) -> float:
        """The weighed sum of the three parts."""
        return (self.w_vector * self.vector(cos) + self.w_lexical * self.lexical(uid)
                + self.w_entity * self.entity(uid))
