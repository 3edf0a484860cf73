"""The public facade of the memory core: ``BrainMem.open(path)`` and its operations."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType

import numpy as np

from brainmem_ros.encoders.base import BatchExtractor, Embedder, Extractor, Reasoner
from brainmem_ros.errors import BrainMemError, StoreError
from brainmem_ros.memory import dynamics
from brainmem_ros.memory.adjacency import Adjacency
from brainmem_ros.memory.config import MemoryConfig
from brainmem_ros.memory.data_dir import DirectoryLock, refuse_truncated_store
from brainmem_ros.memory.defaults import default_embedder, default_extractor
from brainmem_ros.memory.enrichment import EnrichmentWorker
from brainmem_ros.memory.facts import Fact, answer_order
from brainmem_ros.memory.fleet_recall import FleetRecall, retrieve_scoped
from brainmem_ros.memory.graph import Neighbours, link_candidates
from brainmem_ros.memory.index import HotIndex, build_index
from brainmem_ros.memory.index_saver import IndexSaver
from brainmem_ros.memory.intake import DEDUP_K, draft_unit, find_repeat
from brainmem_ros.memory.requests import (
    FORGET_MODES,
    NAME_BYTES,
    ForgetMode,
    TimeLike,
    check_batch,
    check_recall,
    check_text,
    to_seconds,
)
from brainmem_ros.memory.retrieval import Query, Retriever
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.store.facts import FactStore, observe_facts
from brainmem_ros.memory.types import (
    Enrichment,
    Entity,
    MemoryEvent,
    MemoryStats,
    MemoryUnit,
    ObservationInput,
    Pose,
    PreparedBatch,
    ScoredMemory,
    StoreResult,
    UnitType,
)
from brainmem_ros.memory.upkeep import Upkeep

__all__ = ['DB_NAME', 'FORGET_MODES', 'INDEX_NAME', 'BrainMem', 'ForgetMode', 'TimeLike', 'check_text',
           'default_embedder', 'default_extractor', 'to_seconds']

_log = logging.getLogger(__name__)
# A Store needs only its nearest few neighbours (near-duplicates, similar-meaning links),
# which sit in the closest inverted lists: a quarter of the calibrated nprobe returned
# the same top-5 for 300 stored vectors of the 1M bench store, in 0.73 ms instead of 2.8.
_STORE_SEARCH_EFFORT = 0.25
DB_NAME = 'memory.db'
INDEX_NAME = 'vectors.faiss'


class BrainMem(Upkeep):
    """A robot's long-term memory in one directory (SQLite + FAISS).

    >>> with BrainMem.open(tmp_path) as mem:                      # doctest: +SKIP
    ...     unit = mem.store('I opened the fridge to get the milk')
    ...     hits = mem.retrieve('where is cold food kept?', top_k=3)
    ...     mem.reinforce([h.unit.id for h in hits], reward=1.0)
    """

    def __init__(self, path: Path, config: MemoryConfig, *, embedder: Embedder,
                 extractor: Extractor, llm_extractor: Extractor | None = None,
                 reasoner: Reasoner | None = None,
                 on_event: Callable[[MemoryEvent], None] | None = None,
                 clock: Callable[[], float] = time.time, fleet: FleetRecall | None = None) -> None:
        self.path = Path(path)
        self.fleet = fleet  # optional fleet tier for retrieve(scope='fleet'); None: local only
        self.config = config
        self.embedder = embedder
        self.extractor = extractor
        self.reasoner = reasoner
        self.clock = clock
        self._on_event = on_event
        self._lock = threading.RLock()
        # One consolidation cycle at a time: two at once decayed every unit twice (the
        # second took up the first's saved, unfinished cycle).
        self._cycle_lock = threading.Lock()
        self._closed = False
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._dir_lock = DirectoryLock.acquire(self.path)
        try:
            self._open_parts(config, embedder, llm_extractor, reasoner)
        except BaseException:
            self._dir_lock.release()
            raise

    def _open_parts(self, config: MemoryConfig, embedder: Embedder, llm_extractor: Extractor | None,
                    reasoner: Reasoner | None) -> None:
        self._index_path = self.path / INDEX_NAME
        refuse_truncated_store(self.path / DB_NAME, self._index_path)
        self.store_db = SqliteStore(self.path / DB_NAME, config=config.store)
        self.facts = FactStore(self.store_db)
        if self.facts.rebuild_pending() and not self.store_db.read_only:
            # A store from before the fact layer: its facts are derived again from its units.
            _log.info('facts rebuilt from the units: %d', self.facts.rebuild())
        if not self.store_db.read_only and not self.facts.derived_claims_checked() and \
                (dropped := self.facts.drop_derived_claims()):
            _log.info('fact claims of reflections taken back: %d', dropped)
        self._unsaved = 0
        self._current_seq = None
        self._saver = IndexSaver(self._index_path, self._index_snapshot, idle=self.store_db.gate.idle_for)
        self._open_index()
        self.adjacency = (Adjacency(self.store_db, fanout=config.retrieval.fanout)
                          if config.links.in_memory_graph else None)
        self.retriever = Retriever(self.store_db, self.index, embedder, config.retrieval,
                                   adjacency=self.adjacency)
        self.enrichment: EnrichmentWorker | None = None
        if llm_extractor is not None:
            self.enrichment = EnrichmentWorker(
                self.store_db, self._lock, llm_extractor, reasoner, config=config.encoder,
                queue_size=config.encoder.queue_size, emit=self._emit, after=self.reflect)
            self.enrichment.start()

    # -- opening and closing ---------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, config: MemoryConfig | None = None, *,
             embedder: Embedder | None = None, extractor: Extractor | None = None,
             llm_extractor: Extractor | None = None, reasoner: Reasoner | None = None,
             on_event: Callable[[MemoryEvent], None] | None = None,
             clock: Callable[[], float] = time.time, fleet: FleetRecall | None = None) -> BrainMem:
        """Open (or create) the memory stored in directory ``path``."""
        config = config or MemoryConfig()
        return cls(Path(path), config, embedder=embedder or default_embedder(config.encoder),
                   extractor=extractor or default_extractor(), llm_extractor=llm_extractor,
                   reasoner=reasoner, on_event=on_event, clock=clock, fleet=fleet)

    def __enter__(self) -> BrainMem:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def reconfigure(self, config: MemoryConfig) -> None:
        """Apply options changed at run time (the node's parameters): retrieval, dynamics,
        links, limits and enrichment read them from the next call on.

        What is fixed once open stays as it was: the store's file settings, the encoders,
        and the in-memory graph's fan-out (a deeper fan-out is read from SQLite).
        """
        with self._lock:
            self.config = config
            self.retriever.config = config.retrieval
            if self.enrichment is not None:
                self.enrichment.config = config.encoder

    def close(self) -> None:
        """Park pending enrichment, save the index, close the store (idempotent)."""
        if self._closed:
            return
        self._closed = True
        # A cycle under way stops at its next step (it resumes at the next open); wait
        # for that step, never close the store under it. Kept: no cycle starts after.
        if not self._cycle_lock.acquire(timeout=60.0):
            _log.warning('consolidation step still running at close; closing anyway')
        if self.enrichment is not None:
            self.enrichment.stop()
        self.retriever.close()
        self._saver.close()
        with self._lock:
            # Nothing changed since the file was written (or loaded): writing it again
            # would take seconds for a large store (2.7 s of serializing at 1M) and change nothing.
            if not self._index_file_current():
                self.save_index()
            if self.adjacency is not None:
                self.adjacency.close()
            self.store_db.close()
        self._dir_lock.release()

    def _build_index(self) -> HotIndex:
        return build_index(self.embedder.dim, lambda: self.store_db.iter_vectors(marginalized=False))

    def save_index(self) -> bool:
        """Write the hot index to disk now (atomically); False when it was not written (a
        read-only store, a disk that refused it)."""
        return self._saver.write(self._index_snapshot())

    # -- store -----------------------------------------------------------------------

    def store(self, text: str, *, stamp: TimeLike | None = None, episode_id: str | None = None,
              source: str | None = None, type: str | UnitType = 'observation',
              pose: Pose | None = None, entities: Sequence[str | Entity] | None = None,
              actions: Sequence[str] | None = None, importance: float | None = None,
              valence: float | None = None) -> MemoryUnit:
        """Remember one observation; returns the stored unit (or the one it repeats)."""
        return self.store_ex(text, stamp=stamp, episode_id=episode_id, source=source, type=type,
                             pose=pose, entities=entities, actions=actions, importance=importance,
                             valence=valence).unit

    def store_ex(self, text: str, *, stamp: TimeLike | None = None, episode_id: str | None = None,
                 source: str | None = None, type: str | UnitType = 'observation',
                 pose: Pose | None = None, entities: Sequence[str | Entity] | None = None,
                 actions: Sequence[str] | None = None, importance: float | None = None,
                 valence: float | None = None) -> StoreResult:
        """Like :meth:`store`, also saying whether a new unit was created."""
        # A lone name is one entity or action, not a sequence of letters.
        result = self.store_many([ObservationInput(
            text=text, stamp=stamp, episode_id=episode_id, source=source, type=type, pose=pose,
            entities=(entities,) if isinstance(entities, str) else tuple(entities or ()),
            actions=(actions,) if isinstance(actions, str) else tuple(actions or ()),
            importance=importance, valence=valence)])[0]
        if isinstance(result, BrainMemError):
            raise result
        return result

    def store_many(self, items: Iterable[ObservationInput]) -> list[StoreResult | BrainMemError]:
        """Store a batch in one transaction; each item gets its result or its own error.

        The batch commits (and fsyncs) once, which is what lets a perception stream be
        ingested at full durability. An invalid item is refused alone; a failing write
        (full or read-only disk) fails the whole batch. Same as
        ``commit(prepare(items))``.
        """
        return self.commit(self.prepare(items))

    def prepare(self, items: Iterable[ObservationInput]) -> PreparedBatch:
        """Validate, extract and embed a batch: the CPU-heavy half of a Store.

        Touches neither the database nor the index and takes no lock, so a caller
        can prepare the next batch while :meth:`commit` writes this one (the topic
        ingest does: the encoder and the writer then use both cores).
        """
        store_cfg = self.config.store
        errors, checked = check_batch(list(items), max_bytes=store_cfg.max_text_bytes, now=self.clock(),
                                      future_s=store_cfg.stamp_future_tolerance_s)
        results: list[StoreResult | BrainMemError | None] = list(errors)
        drafts: list[tuple[int, MemoryUnit]] = []
        if isinstance(self.extractor, BatchExtractor) and len(checked) > 1:
            self.extractor.prime([obs.text for _, _, obs in checked])
        for i, item, obs in checked:
            try:
                drafts.append((i, draft_unit(obs, item.pose, self.extractor, clock=self.clock,
                                             enrich=self.enrichment is not None)))
            except BrainMemError as exc:
                results[i] = exc
        try:
            vectors = self.embedder.embed([d.text for _, d in drafts]) if drafts else None
        except BrainMemError as exc:
            return PreparedBatch([r if r is not None else exc for r in results], [], None)
        return PreparedBatch(results, drafts, vectors)

    def commit(self, prepared: PreparedBatch, *, reflect: bool = True) -> list[StoreResult | BrainMemError]:
        """Deduplicate, link and write a prepared batch in one transaction; then reflect when
        :attr:`reflects_on_store`, unless ``reflect`` is false (the topic ingest plans the
        reflection itself and stores its insights with a later batch)."""
        results = list(prepared.results)
        drafts, vectors = prepared.drafts, prepared.vectors
        created: list[MemoryUnit] = []
        superseded: list[int] = []
        # A request before the lock: a background step holding its turn may be waiting for it.
        with self.store_db.request(), self._lock:
            added: list[int] = []
            try:
                with self.store_db.atomic():
                    for (i, draft), vector in zip(drafts, vectors if vectors is not None else [],
                                                  strict=True):
                        nearest = self._nearest(vector)
                        repeat = find_repeat(self.store_db, draft, nearest, self.config.dynamics)
                        if repeat is not None:
                            self.store_db.set_fields(
                                repeat.id, repeats=repeat.repeats + 1,
                                strength=min(dynamics.MAX_STRENGTH, repeat.strength + 0.05),
                                last_access=max(repeat.last_access, draft.stamp))
                            updated = self.store_db.get_unit(repeat.id) or repeat
                            results[i] = StoreResult(updated, False,
                                                     f'repeat of memory {repeat.id} (near-duplicate)')
                            continue
                        uid = self.store_db.insert_unit(draft, vector)
                        unit = replace(draft, id=uid)  # what was just written, no re-read
                        self.store_db.add_edges(link_candidates(self.store_db, self.index, unit, vector,
                                                                self.config.links, nearest=nearest))
                        superseded += observe_facts(self.store_db, unit)
                        # In the index at once, so later items of the batch link to this one.
                        self.index.add(np.asarray([uid], dtype=np.int64), vector.reshape(1, -1))
                        added.append(uid)
                        created.append(unit)
                        results[i] = StoreResult(unit, True, f'stored memory {uid}')
                    # No new generation: a saved index file stays good for the units
                    # it has, and an open adds these (ids above its max_id) from SQLite.
            except BrainMemError as exc:
                # Rolled back: the index must not keep what the database does not have.
                self.index.remove(np.asarray(added, dtype=np.int64))
                return [r if isinstance(r, BrainMemError) else exc for r in results]
            self._index_changed(len(added))
        merged = [r.unit.id for r in results if isinstance(r, StoreResult) and not r.created]
        if merged:
            self._emit('merged', merged, 'near-duplicate folded into an existing memory')
        self._emit_created(created)
        if superseded:
            self._emit('superseded', superseded, f'by memories {[u.id for u in created]}')
        if self.enrichment is not None:
            for unit in created:
                if not self.enrichment.submit(unit.id):
                    self.store_db.set_enrichment(unit.id, Enrichment.SKIPPED, 'enrichment queue full')
        elif self.reasoner is None and created and reflect:
            self.reflect()
        return [r if r is not None else StoreError('not stored') for r in results]

    def _nearest(self, vector: np.ndarray) -> Neighbours | None:
        """The one vector search of a Store, shared by the near-duplicate check and linking."""
        if not len(self.index):
            return None
        k = max(DEDUP_K, self.config.links.similar_links + 1)
        scores, ids = self.index.search(vector.reshape(1, -1), k, effort=_STORE_SEARCH_EFFORT)
        return scores[0], ids[0]

    # -- retrieve --------------------------------------------------------------------

    def retrieve(self, query: str, *, goal: str | None = None, state: str | None = None,
                 top_k: int | None = None, episode_id: str | None = None,
                 types: Sequence[str | UnitType] | None = None, since: TimeLike | None = None,
                 until: TimeLike | None = None, near: Pose | None = None, radius: float | None = None,
                 include_marginalized: bool = False, as_of: TimeLike | None = None,
                 scope: str = 'local') -> list[ScoredMemory]:
        """Goal-directed recall: hybrid recall, spreading activation, rerank.

        ``scope='fleet'`` merges the fleet's shared memories in through the optional
        fleet tier (a ``ScopedResults``, see :mod:`brainmem_ros.memory.fleet_recall`).
        """
        if scope != 'local':
            return retrieve_scoped(self.fleet, self.retrieve, scope, query, dict(
                goal=goal, state=state, top_k=top_k, episode_id=episode_id, types=types, since=since,
                until=until, near=near, radius=radius, include_marginalized=include_marginalized,
                as_of=as_of))
        cfg = self.config.retrieval
        r = check_recall(query, goal, state, top_k=top_k, default_top_k=cfg.default_top_k,
                         max_top_k=cfg.max_top_k, max_bytes=self.config.store.max_text_bytes,
                         since=since, until=until, near=near, radius=radius, types=types, as_of=as_of)
        episode = check_text(episode_id or '', 'episode_id', max_bytes=NAME_BYTES, required=False)
        q = Query(query=r.query, goal=r.goal, state=r.state, top_k=r.top_k,
                  episode_id=episode or None, types=r.types, since=r.since, until=r.until,
                  near=near, radius=radius, include_marginalized=include_marginalized, as_of=r.as_of)
        now = self.clock()
        with self.store_db.request():
            results = self.retriever.run(q, now=now)
        if results:
            self.store_db.touch([r.unit.id for r in results], now)
        return results

    # -- inspection ------------------------------------------------------------------

    def get(self, ids: Sequence[int]) -> list[MemoryUnit]:
        """Units by id, their access statistics up to date; unknown ids raise UnknownIdError."""
        self.store_db.flush_access()
        return self._units_or_raise(list(ids))

    def stats(self) -> MemoryStats:
        """Counts and sizes."""
        db = self.store_db
        counts = db.unit_counts()
        return MemoryStats(
            units=counts['units'], active_units=counts['active'],
            marginalized_units=counts['marginalized'], protected_units=counts['protected'],
            edges=db.edge_count(),
            queue_depth=self.enrichment.depth() if self.enrichment is not None else 0,
            index_kind=self.index.kind, index_size=len(self.index), index_status=self.index_status,
            store_bytes=db.size_bytes(), enrichment=db.enrichment_counts())

    def state_of(self, entity: str, *, attribute: str | None = None,
                 as_of: TimeLike | None = None) -> list[Fact]:
        """What is (or was, ``as_of``) true of ``entity``: facts that hold first, then history.

        ``entity`` is matched as typed ("the blue umbrellas", "Umbrella"): articles, plural,
        case and the order of the words before the noun do not matter, and a shorter name
        ("umbrella") finds every entity it names ("blue umbrella"). Each fact carries its
        evidence (unit ids, oldest first) and, for places, the last known pose and frame.

        >>> mem.state_of('blue umbrella')[0].value                 # doctest: +SKIP
        'garage shelf'
        """
        name = check_text(entity, 'entity', max_bytes=256, required=True)
        attr = check_text(attribute or '', 'attribute', max_bytes=64, required=False).lower() or None
        t = to_seconds(as_of, 'as_of')
        keys = self.facts.matching_keys(name)
        return answer_order(self.facts.facts_of(keys, attribute=attr), attribute=attr, as_of=t, asked=name)
