"""The public facade of the memory core: ``BrainMem.open(path)`` and its operations."""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Literal

import numpy as np

from brainmem_ros.encoders.base import BatchExtractor, Embedder, Extractor, Reasoner
from brainmem_ros.errors import BrainMemError, InvalidInputError, StoreError, UnknownIdError
from brainmem_ros.memory import dynamics
from brainmem_ros.memory.adjacency import Adjacency
from brainmem_ros.memory.config import EncoderConfig, MemoryConfig
from brainmem_ros.memory.enrichment import EnrichmentWorker
from brainmem_ros.memory.fact_store import FactStore, observe_facts
from brainmem_ros.memory.facts import Fact, answer_order
from brainmem_ros.memory.fleet_recall import FleetRecall, retrieve_scoped
from brainmem_ros.memory.graph import Neighbours, link_candidates
from brainmem_ros.memory.index import HotIndex, build_index, load_index, needs_rebuild, save_index
from brainmem_ros.memory.reflection import reflect as run_reflection
from brainmem_ros.memory.retrieval import Query, Retriever
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import (
    Enrichment,
    Entity,
    MemoryEvent,
    MemoryStats,
    MemoryUnit,
    ObservationInput,
    Outcome,
    Pose,
    PreparedBatch,
    ScoredMemory,
    StoreResult,
    UnitType,
    normalise_name,
)

TimeLike = float | int | datetime
_log = logging.getLogger(__name__)
_NUMBER = re.compile(r'\d+(?:\.\d+)?')
# Near-duplicates are looked for among the few nearest memories only.
_DEDUP_K = 3
# A Store needs only its nearest few neighbours (near-duplicates, similar-meaning links),
# which sit in the closest inverted lists: a quarter of the calibrated nprobe returned
# the same top-5 for 300 stored vectors of the 1M bench store, in 0.73 ms instead of 2.8.
_STORE_SEARCH_EFFORT = 0.25
ForgetMode = Literal['marginalize', 'restore', 'protect', 'unprotect', 'delete']
FORGET_MODES: tuple[str, ...] = ('marginalize', 'restore', 'protect', 'unprotect', 'delete')
DB_NAME = 'memory.db'
INDEX_NAME = 'vectors.faiss'


def to_seconds(value: TimeLike | None, name: str) -> float | None:
    """POSIX seconds from seconds or a datetime; None stays None."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        msg = f'{name} must be POSIX seconds or a datetime, got {value!r}'
        raise InvalidInputError(msg)
    return float(value)


def check_text(text: str, name: str, *, max_bytes: int, required: bool) -> str:
    """Validated text: a str, valid UTF-8, not too long, non-empty when required."""
    if not isinstance(text, str):
        msg = f'{name} must be a string, got {type(text).__name__}'
        raise InvalidInputError(msg)
    try:
        size = len(text.encode('utf-8'))
    except UnicodeEncodeError:
        msg = f'{name} is not valid UTF-8 (it contains a lone surrogate)'
        raise InvalidInputError(msg) from None
    if '\x00' in text:
        msg = f'{name} contains a NUL character'
        raise InvalidInputError(msg)
    if size > max_bytes:
        msg = f'{name} is {size} bytes, more than the {max_bytes} allowed'
        raise InvalidInputError(msg)
    if required and not text.strip():
        msg = f'{name} is empty'
        raise InvalidInputError(msg)
    return text.strip()


def default_embedder(config: EncoderConfig) -> Embedder:
    """The configured ONNX encoder (all-MiniLM-L6-v2, dynamic int8, unless paths are given)."""
    from brainmem_ros.encoders.models import default_model_paths
    from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder

    paths = default_model_paths(Path(config.model_dir) if config.model_dir else None)
    embedder: Embedder = OnnxEmbedder(
        Path(config.embedder_model) if config.embedder_model else paths.embedder_model,
        Path(config.tokenizer) if config.tokenizer else paths.tokenizer,
        max_tokens=config.max_tokens, threads=config.threads, batch_size=config.batch_size,
        parallel=config.parallel_calls, output=config.embedder_output)
    return embedder


def default_extractor() -> Extractor:
    """The grounded extractor of the fast path: spaCy's parse (encoders/parsed.py)."""
    from brainmem_ros.encoders.parsed import SpacyExtractor

    return SpacyExtractor()


class BrainMem:
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
        self._closed = False
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._index_path = self.path / INDEX_NAME
        _refuse_truncated_store(self.path / DB_NAME, self._index_path)
        self.store_db = SqliteStore(self.path / DB_NAME, config=config.store)
        self.facts = FactStore(self.store_db)
        if self.facts.rebuild_pending() and not self.store_db.read_only:
            # A store from before the fact layer: its facts are derived again from its units.
            _log.info('facts rebuilt from the units: %d', self.facts.rebuild())
        generation = int(self.store_db.get_meta('index_generation', '0'))
        index, why = load_index(self._index_path, dim=embedder.dim, generation=generation)
        self._unsaved = 0
        if index is None:
            self.index = self._build_index()
            self.index_status = f'rebuilt from the store ({why})'
            self.save_index()
        else:
            self.index = index
            self.index_status = 'loaded'
        self.adjacency = (Adjacency(self.store_db, fanout=config.retrieval.fanout)
                          if config.links.in_memory_graph else None)
        self.retriever = Retriever(self.store_db, self.index, embedder, config.retrieval,
                                   adjacency=self.adjacency)
        self.enrichment: EnrichmentWorker | None = None
        if llm_extractor is not None:
            self.enrichment = EnrichmentWorker(self, llm_extractor, reasoner,
                                               queue_size=config.encoder.queue_size)
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

    def close(self) -> None:
        """Park pending enrichment, save the index, close the store (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self.enrichment is not None:
            self.enrichment.stop()
        with self._lock:
            self.save_index()
            if self.adjacency is not None:
                self.adjacency.close()
            self.store_db.close()

    def _build_index(self) -> HotIndex:
        return build_index(self.embedder.dim, lambda: self.store_db.iter_vectors(marginalized=False))

    def save_index(self) -> bool:
        """Write the hot index to disk (atomically); False when the disk refused it."""
        with self._lock:
            generation = int(self.store_db.get_meta('index_generation', '0'))
            try:
                save_index(self.index, self._index_path, generation=generation)
            except OSError as exc:
                # The index is derived from SQLite: when it cannot be written (read-only
                # or full disk) it stays in memory and the next open rebuilds it.
                _log.warning('vector index not saved (%s); it will be rebuilt on next open', exc)
                return False
            self._unsaved = 0
            return True

    def _emit(self, kind: str, ids: Iterable[int], detail: str = '') -> None:
        if self._on_event is not None:
            self._on_event(MemoryEvent(kind, tuple(ids), detail))

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
        result = self.store_many([ObservationInput(
            text=text, stamp=stamp, episode_id=episode_id, source=source, type=type, pose=pose,
            entities=tuple(entities or ()), actions=tuple(actions or ()), importance=importance,
            valence=valence)])[0]
        if isinstance(result, BrainMemError):
            raise result
        return result

    def store_many(self, items: Sequence[ObservationInput]) -> list[StoreResult | BrainMemError]:
        """Store a batch in one transaction; each item gets its result or its own error.

        The batch commits (and fsyncs) once, which is what lets a perception stream be
        ingested at full durability. An invalid item is refused alone; a failing write
        (full or read-only disk) fails the whole batch. Same as
        ``commit(prepare(items))``.
        """
        return self.commit(self.prepare(items))

    def prepare(self, items: Sequence[ObservationInput]) -> PreparedBatch:
        """Validate, extract and embed a batch: the CPU-heavy half of a Store.

        Touches neither the database nor the index and takes no lock, so a caller
        can prepare the next batch while :meth:`commit` writes this one (the topic
        ingest does: the encoder and the writer then use both cores).
        """
        results: list[StoreResult | BrainMemError | None] = [None] * len(items)
        drafts: list[tuple[int, MemoryUnit]] = []
        if isinstance(self.extractor, BatchExtractor) and len(items) > 1:
            self.extractor.prime([i.text for i in items if isinstance(i.text, str)])
        for i, item in enumerate(items):
            try:
                drafts.append((i, self._draft(item)))
            except BrainMemError as exc:
                results[i] = exc
        try:
            vectors = self.embedder.embed([d.text for _, d in drafts]) if drafts else None
        except BrainMemError as exc:
            return PreparedBatch([r if r is not None else exc for r in results], [], None)
        return PreparedBatch(results, drafts, vectors)

    def commit(self, prepared: PreparedBatch) -> list[StoreResult | BrainMemError]:
        """Deduplicate, link and write a prepared batch in one transaction."""
        results = list(prepared.results)
        drafts, vectors = prepared.drafts, prepared.vectors
        created: list[MemoryUnit] = []
        superseded: list[int] = []
        with self._lock:
            added: list[int] = []
            try:
                with self.store_db.atomic():
                    for (i, draft), vector in zip(drafts, vectors if vectors is not None else [],
                                                  strict=True):
                        nearest = self._nearest(vector)
                        repeat = self._find_repeat(draft, nearest)
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
                    if added:
                        self.store_db.bump_generation()
            except BrainMemError as exc:
                # Rolled back: the index must not keep what the database does not have.
                self.index.remove(np.asarray(added, dtype=np.int64))
                return [r if isinstance(r, BrainMemError) else exc for r in results]
            self._index_changed(len(added))
        merged = [r.unit.id for r in results if isinstance(r, StoreResult) and not r.created]
        if merged:
            self._emit('merged', merged, 'near-duplicate folded into an existing memory')
        if created:
            self._emit('created', [u.id for u in created], created[0].type.value)
        if superseded:
            self._emit('superseded', superseded, f'by memories {[u.id for u in created]}')
        if self.enrichment is not None:
            for unit in created:
                if not self.enrichment.submit(unit.id):
                    self.store_db.set_enrichment(unit.id, Enrichment.SKIPPED, 'enrichment queue full')
        elif self.reasoner is None and created:
            self.maybe_reflect()
        return [r if r is not None else StoreError('not stored') for r in results]

    def _draft(self, item: ObservationInput) -> MemoryUnit:
        """A validated, extracted (not yet stored) unit for one observation."""
        max_bytes = self.config.store.max_text_bytes
        text = check_text(item.text, 'text', max_bytes=max_bytes, required=True)
        episode = check_text(item.episode_id or '', 'episode_id', max_bytes=256, required=False)
        src = check_text(item.source or '', 'source', max_bytes=256, required=False)
        utype = UnitType.parse(item.type)
        when = to_seconds(item.stamp, 'stamp')
        when = self.clock() if when is None or when <= 0 else when
        importance, valence = item.importance, item.valence
        if importance is not None and not (math.isfinite(importance) and 1.0 <= importance <= 10.0):
            msg = f'importance must be within 1..10, got {importance!r}'
            raise InvalidInputError(msg)
        if valence is not None and not (math.isfinite(valence) and -1.0 <= valence <= 1.0):
            msg = f'valence must be within -1..1, got {valence!r}'
            raise InvalidInputError(msg)
        given = [e if isinstance(e, Entity) else
                 Entity(check_text(e, 'entity', max_bytes=256, required=True)) for e in item.entities]
        given_actions = [check_text(a, 'action', max_bytes=256, required=True).lower()
                         for a in item.actions]
        extraction = self.extractor.extract(text, known_entities=[e.name for e in given])
        merged: dict[str, Entity] = {e.key: e for e in extraction.entities}
        for e in given:
            merged.setdefault(e.key, e)
        unit_valence = valence if valence is not None else (extraction.valence or 0.0)
        unit_importance = importance if importance is not None else (
            extraction.importance or _heuristic_importance(extraction.outcome, len(merged)))
        return MemoryUnit(
            id=0, stamp=when, text=text, type=utype, episode_id=episode, source=src,
            entities=tuple(merged.values()),
            actions=tuple(dict.fromkeys([*extraction.actions, *given_actions])),
            state_changes=extraction.state_changes, outcome=extraction.outcome,
            valence=float(unit_valence), importance=float(unit_importance), last_access=when,
            pose=item.pose, valid_from=when,
            enrichment=Enrichment.PENDING if self.enrichment is not None else Enrichment.NONE)

    def _nearest(self, vector: np.ndarray) -> Neighbours | None:
        """The one vector search of a Store, shared by the near-duplicate check and linking."""
        if not len(self.index):
            return None
        k = max(_DEDUP_K, self.config.links.similar_links + 1)
        scores, ids = self.index.search(vector.reshape(1, -1), k, effort=_STORE_SEARCH_EFFORT)
        return scores[0], ids[0]

    def _find_repeat(self, unit: MemoryUnit, nearest: Neighbours | None) -> MemoryUnit | None:
        cfg = self.config.dynamics
        if nearest is None:
            return None
        scores, ids = nearest
        close = [int(i) for s, i in zip(scores[:_DEDUP_K], ids[:_DEDUP_K], strict=True)
                 if i >= 0 and s >= cfg.dedup_cosine]
        for other in self.store_db.get_units(close).values():
            if other.episode_id != unit.episode_id or other.type != unit.type:
                continue
            if abs(other.stamp - unit.stamp) > cfg.dedup_window_s:
                continue
            if unit.pose is not None and other.pose is not None and \
                    unit.pose.distance(other.pose) > cfg.dedup_radius:
                continue
            if (unit.pose is None) != (other.pose is None):
                continue
            # Numbers name things (room 214, cup 3, message 7): never fold them together.
            if _NUMBER.findall(unit.text) != _NUMBER.findall(other.text):
                continue
            return other
        return None

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
        max_bytes = self.config.store.max_text_bytes
        q_text = check_text(query or '', 'query', max_bytes=max_bytes, required=False)
        g_text = check_text(goal or '', 'goal', max_bytes=max_bytes, required=False)
        s_text = check_text(state or '', 'state', max_bytes=max_bytes, required=False)
        if not (q_text or g_text or s_text):
            msg = 'query, goal and state are all empty: nothing to recall by'
            raise InvalidInputError(msg)
        k = cfg.default_top_k if top_k is None or top_k == 0 else top_k
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= cfg.max_top_k:
            msg = f'top_k must be within 1..{cfg.max_top_k}, got {top_k!r}'
            raise InvalidInputError(msg)
        t_since, t_until = to_seconds(since, 'since'), to_seconds(until, 'until')
        if t_since is not None and t_until is not None and t_since > t_until:
            msg = f'time window is reversed: since {t_since} is after until {t_until}'
            raise InvalidInputError(msg)
        if (near is None) != (radius is None):
            msg = 'near and radius go together: give both or neither'
            raise InvalidInputError(msg)
        if radius is not None and not (math.isfinite(radius) and radius > 0):
            msg = f'radius must be a positive number of metres, got {radius!r}'
            raise InvalidInputError(msg)
        parsed_types = frozenset(UnitType.parse(t) for t in types) if types else None
        q = Query(query=q_text, goal=g_text, state=s_text, top_k=k,
                  episode_id=episode_id or None, types=parsed_types, since=t_since, until=t_until,
                  near=near, radius=radius, include_marginalized=include_marginalized,
                  as_of=to_seconds(as_of, 'as_of'))
        now = self.clock()
        results = self.retriever.run(q, now=now)
        if results:
            self.store_db.touch([r.unit.id for r in results], now)
        return results

    # -- reinforce, consolidate, reflect, forget ----------------------------------------

    def _units_or_raise(self, ids: Sequence[int]) -> list[MemoryUnit]:
        if not ids:
            msg = 'no memory ids given'
            raise InvalidInputError(msg)
        bad = [i for i in ids if isinstance(i, bool) or not isinstance(i, int) or i <= 0]
        if bad:
            msg = f'memory ids must be positive integers, got {bad[:5]!r}'
            raise InvalidInputError(msg)
        units = self.store_db.get_units(ids)
        missing = tuple(sorted({i for i in ids if i not in units}))
        if missing:
            msg = f'unknown memory id(s): {", ".join(map(str, missing[:20]))}'
            raise UnknownIdError(msg, missing)
        return [units[i] for i in dict.fromkeys(ids)]

    def reinforce(self, ids: Sequence[int], *, reward: float, note: str | None = None
                  ) -> list[MemoryUnit]:
        """Reward (or punish) memories that were used; returns them updated."""
        if isinstance(reward, bool) or not isinstance(reward, (int, float)) or \
                not math.isfinite(reward) or not -1.0 <= reward <= 1.0:
            msg = f'reward must be within -1..1, got {reward!r}'
            raise InvalidInputError(msg)
        note_text = check_text(note or '', 'note', max_bytes=self.config.store.max_text_bytes,
                               required=False)
        with self._lock:
            units = self._units_or_raise(list(ids))
            restore = dynamics.reinforce(self.store_db, units, float(reward), note=note_text,
                                         now=self.clock(), config=self.config.dynamics)
            if restore:
                self._set_marginalized(restore, False)
        self._emit('reinforced', [u.id for u in units], f'reward {reward:+.2f}')
        updated = self.store_db.get_units([u.id for u in units])
        return [updated[u.id] for u in units]

    def consolidate(self, *, now: TimeLike | None = None) -> dynamics.ConsolidationReport:
        """Decay, fold access counts, marginalize weak units, prune edges, replay.

        Every step is one short transaction and the lock is released between them:
        units decay in chunks of ``dynamics.DECAY_CHUNK``, edges decay by one write of
        the edge scale, weak edges are pruned per range of source ids, replay counts
        per range of unit ids. Store and Retrieve carry on while a cycle runs. A cycle a
        crash interrupted is finished first, from where it was.
        """
        t = to_seconds(now, 'now')
        when = self.clock() if t is None else t
        decayed, pruned = 0, 0
        weak: list[int] = []
        replayed: list[int] = []
        while True:
            with self._lock:
                cycle = dynamics.begin_cycle(self.store_db, now=when)
            while True:
                started = time.perf_counter()
                with self._lock:
                    step = dynamics.decay_chunk(self.store_db, self.index, cycle,
                                                config=self.config.dynamics)
                    if step is None:
                        break
                    cycle, n, chunk_weak = step
                decayed += n
                weak += chunk_weak
                time.sleep(max(dynamics.CHUNK_PAUSE_S, time.perf_counter() - started))
            pruned = 0  # the last cycle's, as before
            steps = dynamics.edge_steps(self.store_db, cycle, config=self.config.dynamics)
            while True:
                started = time.perf_counter()
                with self._lock:
                    try:
                        pruned += next(steps)
                    except StopIteration as done:
                        replayed = done.value
                        break
                time.sleep(max(dynamics.CHUNK_PAUSE_S, time.perf_counter() - started))
            if not cycle.resumed:
                break
        report = dynamics.ConsolidationReport(decayed=decayed, marginalized=tuple(weak),
                                              pruned_edges=pruned, replayed=tuple(replayed))
        with self._lock:
            # Once per cycle, not per chunk: a save rewrites the whole index under the
            # lock (a crash before it is caught by the generation check).
            self._index_changed(len(weak))
            outgrown = needs_rebuild(self.index)
            if outgrown is not None:
                # A long-running robot switches to the index that suits its size here,
                # without waiting for a restart.
                self.index = self.retriever.index = self._build_index()
                self.index_status = f'rebuilt at consolidation ({outgrown})'
                self.save_index()
        if report.marginalized:
            self._emit('marginalized', report.marginalized, 'consolidation')
        return report

    def reflect(self, *, now: TimeLike | None = None, force: bool = False) -> list[MemoryUnit]:
        """Create reflection units when enough important experience has piled up."""
        t = to_seconds(now, 'now')
        created = run_reflection(self, now=self.clock() if t is None else t, force=force)
        if created:
            self._emit('reflected', [u.id for u in created])
        return created

    def maybe_reflect(self) -> list[MemoryUnit]:
        """Reflect if the importance threshold has been passed (cheap check)."""
        return self.reflect()

    def protect(self, ids: Sequence[int]) -> list[int]:
        """Mark memories as core: never decayed, never marginalized."""
        return self.forget(ids, mode='protect')

    def forget(self, ids: Sequence[int], *, mode: ForgetMode | str = 'marginalize',
               confirm: bool = False) -> list[int]:
        """Marginalize / restore / protect / unprotect, or (with ``confirm``) delete memories."""
        if mode not in FORGET_MODES:
            msg = f'unknown forget mode {mode!r} (expected one of: {", ".join(FORGET_MODES)})'
            raise InvalidInputError(msg)
        if mode == 'delete' and not confirm:
            msg = 'hard delete is irreversible and needs confirm=True'
            raise InvalidInputError(msg)
        with self._lock:
            units = self._units_or_raise(list(ids))
            uids = [u.id for u in units]
            if mode == 'marginalize':
                changed = [u.id for u in units if not u.marginalized and not u.protected]
                self._set_marginalized(changed, True)
            elif mode == 'restore':
                changed = [u.id for u in units if u.marginalized]
                self._set_marginalized(changed, False)
            elif mode in ('protect', 'unprotect'):
                flag = mode == 'protect'
                changed = [u.id for u in units if u.protected != flag]
                with self.store_db.atomic():
                    for uid in changed:
                        self.store_db.set_fields(uid, protected=int(flag))
                if flag:
                    self._set_marginalized([u.id for u in units if u.marginalized], False)
            else:
                changed = uids
                with self.store_db.atomic() as db:
                    self.facts.forget_units(uids)
                    db.executemany('DELETE FROM units WHERE id = ?', [(i,) for i in uids])
                    self.store_db.bump_generation()
                self.index.remove(np.asarray(uids, dtype=np.int64))
                self._index_changed(len(uids))
        kind = {'marginalize': 'marginalized', 'restore': 'restored', 'protect': 'protected',
                'unprotect': 'unprotected', 'delete': 'deleted'}[mode]
        if changed:
            self._emit(kind, changed)
        return changed

    def _set_marginalized(self, ids: Sequence[int], flag: bool) -> None:
        if not ids:
            return
        with self.store_db.atomic():
            for uid in ids:
                self.store_db.set_fields(uid, marginalized=int(flag))
            self.store_db.bump_generation()
        arr = np.asarray(ids, dtype=np.int64)
        if flag:
            self.index.remove(arr)
        else:
            vecs = self.store_db.vectors(ids)
            self.index.remove(arr)  # never hold an id twice
            self.index.add(arr, np.stack([vecs[i] for i in ids]))
        self._index_changed(len(ids))

    def _index_changed(self, count: int) -> None:
        # Saving rewrites the whole index, so it happens every index_save_every changes
        # and at close; after a crash in between, the generation check rebuilds it.
        self._unsaved += count
        if self._unsaved >= self.config.store.index_save_every:
            self.save_index()

    # -- inspection ------------------------------------------------------------------

    def get(self, ids: Sequence[int]) -> list[MemoryUnit]:
        """Units by id; unknown ids raise UnknownIdError."""
        return self._units_or_raise(list(ids))

    def stats(self) -> MemoryStats:
        """Counts and sizes."""
        db = self.store_db
        enrichment = {state: count for state, count in db.query(
            'SELECT enrichment, COUNT(*) FROM units GROUP BY enrichment')}
        return MemoryStats(
            units=db.count(), active_units=db.count('marginalized = 0'),
            marginalized_units=db.count('marginalized = 1'), protected_units=db.count('protected = 1'),
            edges=db.edge_count(),
            queue_depth=self.enrichment.depth() if self.enrichment is not None else 0,
            index_kind=self.index.kind, index_size=len(self.index), index_status=self.index_status,
            store_bytes=db.size_bytes(), enrichment=enrichment)

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
        return answer_order(self.facts.facts_of(keys, attribute=attr), attribute=attr, as_of=t)

    def entity_units(self, name: str, *, limit: int = 50) -> list[int]:
        """Ids of the most recent units that mention entity ``name``."""
        key = normalise_name(name)
        return self.store_db.units_with_entities([key], per_key=limit, active_only=False)[key]


def _heuristic_importance(outcome: Outcome, n_entities: int) -> float:
    # Without an LLM rating: failures teach the most, then successes, then scenes
    # with many things in them.
    base = {Outcome.FAILURE: 7.0, Outcome.SUCCESS: 6.0, Outcome.UNKNOWN: 4.0}[outcome]
    return min(10.0, base + min(n_entities, 4) * 0.5)


def _refuse_truncated_store(db_path: Path, index_path: Path) -> None:
    # An empty database file would open as a brand-new store and the saved index
    # be overwritten: if the index says there were memories, that is damage, not a
    # fresh start, and the operator must decide.
    sidecar = index_path.with_suffix(index_path.suffix + '.json')
    if not db_path.exists() or db_path.stat().st_size > 0 or not sidecar.exists():
        return
    try:
        count = int(json.loads(sidecar.read_text()).get('count', 0))
    except (ValueError, TypeError, AttributeError):
        return  # an unreadable sidecar says nothing about past memories
    if count > 0:
        msg = (f'{db_path} is empty but {index_path.name} holds {count} vectors: the database was '
               'truncated or replaced; restore it from a backup or move this directory away')
        raise StoreError(msg)
