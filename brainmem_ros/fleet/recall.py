"""Fleet recall: the robot's own results merged with its fleet's (a part of ``FleetSync``).

The server answers with pgvector ANN and full-text matches of other robots' shared
units; when it cannot be reached in time, the local fleet cache answers instead (what
the subscription last received), and the answer says which. The merge ranks by the
principles of local recall (:mod:`brainmem_ros.fleet.fusion`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from brainmem_ros.errors import BrainMemError, InvalidInputError
from brainmem_ros.fleet.cache_store import CacheStore
from brainmem_ros.fleet.config import FleetConfig
from brainmem_ros.fleet.errors import FleetError
from brainmem_ros.fleet.fusion import Recall, RecallResult, merge
from brainmem_ros.fleet.pg_store import FleetClient, FleetHit, RecallFilter
from brainmem_ros.memory.fleet_recall import ScopedResults
from brainmem_ros.memory.lexicon import content_words
from brainmem_ros.memory.query import MAX_TERMS, ideal_bm25
from brainmem_ros.memory.store.fts_idf import idf
from brainmem_ros.memory.types import ORDINARY_TYPES, UnitType

if TYPE_CHECKING:
    from brainmem_ros.fleet.outbox_store import OutboxStore
    from brainmem_ros.memory.brainmem import BrainMem

SCOPES = ('local', 'fleet')


class FleetRecaller:
    """``retrieve(..., scope='fleet')`` over the server or the cache (a part of ``FleetSync``)."""

    config: FleetConfig
    cache: CacheStore | None
    clock: Callable[[], float]
    _connected: bool

    if TYPE_CHECKING:  # what FleetSync provides
        @property
        def client(self) -> FleetClient:
            """See :attr:`FleetSync.client`."""

        def _parts(self) -> tuple[BrainMem, OutboxStore]:
            """See :meth:`FleetSync._parts`."""

        def _failed(self, exc: BrainMemError) -> None:
            """See :meth:`FleetSync._failed`."""

    def retrieve(self, query: str, *, scope: str = 'local', top_k: int | None = None,
                 **kwargs: Any) -> Recall:
        """Local recall, plus (scope 'fleet') the fleet's shared memories merged in.

        Keyword arguments are those of :meth:`BrainMem.retrieve`. When the server
        cannot be reached in time, the answer holds the local results and says so.
        """
        mem, _ = self._parts()
        if scope not in SCOPES:
            msg = f'scope must be one of: {", ".join(SCOPES)}, got {scope!r}'
            raise InvalidInputError(msg)
        local = mem.retrieve(query, top_k=top_k, **kwargs)
        own = [RecallResult(m, '', 0.0) for m in local]
        if scope == 'local':
            return Recall(own, scope, False, '')
        k = top_k or mem.config.retrieval.default_top_k
        text = ' '.join(t for t in (query, kwargs.get('goal') or '', kwargs.get('state') or '') if t)
        vector = mem.embedder.embed([text])[0]
        types = kwargs.get('types')
        allowed = sorted(UnitType.parse(t).value for t in types) if types else \
            sorted(t.value for t in ORDINARY_TYPES)
        since, until = kwargs.get('since'), kwargs.get('until')
        recall_filter = RecallFilter(types=tuple(allowed), since=_seconds(since), until=_seconds(until),
                                     include_marginalized=bool(kwargs.get('include_marginalized')))
        try:
            hits = self.client.recall(vector, text, limit=self.config.recall_candidates,
                                      recall_filter=recall_filter)
        except FleetError as exc:
            self._failed(exc)
            cached = self.cache.recall(vector, text, me=self.config.robot_id,
                                       limit=self.config.recall_candidates,
                                       recall_filter=recall_filter) if self.cache is not None else []
            if not cached:
                return Recall(own, scope, False, f'fleet not reached, local results only: {exc}')
            synced = self.cache.counts().synced if self.cache is not None else 0.0
            results = merge(local, self._best_own(local, vector), cached, mem.config.retrieval,
                            top_k=k, now=self.clock(), cached=True, lexical=_lexical(mem, text, cached))
            when = time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(synced)) if synced else 'never'
            return Recall(results, scope, False,
                          f'fleet not reached, local results and the fleet cache (last synced {when}): {exc}',
                          cached=True)
        self._connected = True
        results = merge(local, self._best_own(local, vector), hits, mem.config.retrieval, top_k=k,
                        now=self.clock(), lexical=_lexical(mem, text, hits))
        return Recall(results, scope, True, '')

    def retrieve_fleet(self, query: str, **kwargs: Any) -> ScopedResults:
        """The :class:`FleetRecall` seam: ``BrainMem.retrieve(..., scope='fleet')``."""
        recall = self.retrieve(query, scope='fleet', **kwargs)
        return ScopedResults([r.memory for r in recall.results], scope='fleet',
                             robot_ids=[r.robot_id for r in recall.results],
                             shared_at=[r.shared_at for r in recall.results],
                             cached=[r.cached for r in recall.results], fleet_reached=recall.fleet_reached,
                             from_cache=recall.cached, note=recall.note)

    def _best_own(self, local: Sequence[Any], vector: np.ndarray) -> float | None:
        mem, _ = self._parts()
        own_vectors = mem.store_db.vectors([m.unit.id for m in local])
        return max((float(np.dot(v, vector)) for v in own_vectors.values()), default=None)


def _lexical(mem: BrainMem, text: str, hits: Sequence[FleetHit]) -> list[float] | None:
    """Each fleet hit's lexical evidence on this robot's scale (see :func:`fleet.fusion.rank_fleet`).

    The query's terms weighed by this robot's own document counts, as local BM25 weighs
    them: a word in every memory says little, a rare one much. The server's text rank
    knows no such weight. None when the robot cannot weigh them (a read-only store).
    """
    words = [w for w in content_words(text) if len(w) > 2 or w.isdigit()][:MAX_TERMS]
    if not hits or not words:
        return None
    counts, total = mem.store_db.term_document_counts(words)
    terms = mem.store_db.terms_of([h.text + ' ' + ' '.join(_names(h)) for h in hits])
    if terms is None:
        return None
    if not counts:
        return [0.0] * len(hits)
    ideal = ideal_bm25(counts, total)
    weight = {t: idf(n, total) for t, n in counts.items()}
    return [min(1.0, sum(w for t, w in weight.items() if t in held) / ideal) for held in terms]


def _names(hit: FleetHit) -> list[str]:
    try:
        entities = json.loads(hit.entities) if isinstance(hit.entities, str) else hit.entities
        return [str(e[0]) for e in entities]
    except (TypeError, ValueError, IndexError):
        return []


def _seconds(value: Any) -> float | None:
    if value is None:
        return None
    if hasattr(value, 'timestamp'):
        return float(value.timestamp())
    return float(value)
