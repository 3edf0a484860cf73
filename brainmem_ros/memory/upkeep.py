"""What happens to stored memories: reward, consolidation, reflection, forgetting.

:class:`Upkeep` is the part of :class:`~brainmem_ros.memory.brainmem.BrainMem` that
changes memories after they are stored. The rules are :mod:`.dynamics` and
:mod:`.reflection`; this applies them under the memory's lock and keeps the vector
index in step, in memory and in its file (opened, saved).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from brainmem_ros.errors import BrainMemError, BusyError, StoreError, UnknownIdError
from brainmem_ros.memory import dynamics, reflection
from brainmem_ros.memory.config import MemoryConfig
from brainmem_ros.memory.index import HotIndex, IndexSnapshot, load_index, needs_rebuild, snapshot_index
from brainmem_ros.memory.index_saver import IndexSaver
from brainmem_ros.memory.requests import (
    ForgetMode,
    TimeLike,
    check_forget,
    check_ids,
    check_reward,
    check_text,
    to_seconds,
)
from brainmem_ros.memory.retrieval import Retriever
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.store.facts import FactStore
from brainmem_ros.memory.types import Edge, MemoryEvent, MemoryUnit, ObservationInput, StoreResult

if TYPE_CHECKING:
    from brainmem_ros.encoders.base import Embedder, Reasoner
    from brainmem_ros.memory.enrichment import EnrichmentWorker

_log = logging.getLogger(__name__)
# Longest a consolidation step waits for a quiet spell before it claims the next gap
# between two requests: under a steady stream of Retrieves a cycle still advances
# (about 20 steps a second).
_DEFER_S = 0.05


class Upkeep:
    """Reinforce, consolidate, reflect, protect and forget (a part of ``BrainMem``)."""

    path: Path
    config: MemoryConfig
    store_db: SqliteStore
    facts: FactStore
    index: HotIndex
    index_status: str
    retriever: Retriever
    reasoner: Reasoner | None
    embedder: Embedder
    enrichment: EnrichmentWorker | None
    clock: Callable[[], float]
    _lock: threading.RLock
    _cycle_lock: threading.Lock
    _closed: bool
    _index_path: Path
    _on_event: Callable[[MemoryEvent], None] | None
    _unsaved: int
    _saver: IndexSaver
    # The seq of the snapshot that holds the index as it is now (0: the file it was loaded
    # from, unchanged; None: changed since the last snapshot).
    _current_seq: int | None

    if TYPE_CHECKING:  # what BrainMem provides
        def store_many(self, items: Sequence[ObservationInput]) -> list[StoreResult | BrainMemError]:
            """See :meth:`BrainMem.store_many`."""

        def save_index(self) -> bool:
            """See :meth:`BrainMem.save_index`."""

        def _build_index(self) -> HotIndex: ...

    @property
    def reflects_on_store(self) -> bool:
        """Whether a commit reflects (without an LLM); with one, enrichment reflects after it."""
        return self.enrichment is None and self.reasoner is None

    def _emit(self, kind: str, ids: Iterable[int], detail: str = '') -> None:
        if self._on_event is not None:
            self._on_event(MemoryEvent(kind, tuple(ids), detail))

    def _emit_created(self, created: Sequence[MemoryUnit]) -> None:
        """One 'created' event per unit type (a batch of the topic ingest may hold insights)."""
        by_type: dict[str, list[int]] = {}
        for unit in created:
            by_type.setdefault(unit.type.value, []).append(unit.id)
        for kind, ids in by_type.items():
            self._emit('created', ids, kind)

    def _units_or_raise(self, ids: Sequence[int]) -> list[MemoryUnit]:
        check_ids(ids)
        units = self.store_db.get_units(ids)
        missing = tuple(sorted({i for i in ids if i not in units}))
        if missing:
            msg = f'unknown memory id(s): {", ".join(map(str, missing[:20]))}'
            raise UnknownIdError(msg, missing)
        return [units[i] for i in dict.fromkeys(ids)]

    def reinforce(self, ids: Sequence[int], *, reward: float, note: str | None = None
                  ) -> list[MemoryUnit]:
        """Reward (or punish) memories that were used; returns them updated."""
        value = check_reward(reward)
        note_text = check_text(note or '', 'note', max_bytes=self.config.store.max_text_bytes,
                               required=False)
        with self.store_db.request(), self._lock:
            units = self._units_or_raise(list(ids))
            restore = dynamics.reinforce(self.store_db, units, value, note=note_text,
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
        per range of unit ids. Store and Retrieve carry on while a cycle runs: each step
        takes its turn between requests (``SqliteStore.background_turn``, after a quiet
        spell or in the next gap between two requests, each waited for at most
        ``_DEFER_S``), so a step never runs inside a request. A cycle a crash interrupted
        is finished first, from where it was.
        """
        t = to_seconds(now, 'now')
        if self._closed:
            msg = 'memory store is closed'  # as Retrieve and Store say; no cycle began
            raise StoreError(msg)
        if not self._cycle_lock.acquire(blocking=False):
            msg = 'a consolidation cycle is already running; this one was not started'
            raise BusyError(msg)
        try:
            return self._consolidate(self.clock() if t is None else t)
        finally:
            self._cycle_lock.release()

    def _check_open(self) -> None:
        if self._closed:
            # Between two steps: the cycle is saved and resumes where it was at the next open.
            msg = 'memory store is closing: the consolidation cycle stops here and resumes at the next open'
            raise StoreError(msg)

    def _consolidate(self, when: float) -> dynamics.ConsolidationReport:
        decayed, pruned = 0, 0
        weak: list[int] = []
        replayed: list[int] = []
        self.store_db.flush_access()  # this cycle folds the accesses of the last Retrieves
        served = self.store_db.gate.served
        while True:
            with self._lock:
                cycle = dynamics.begin_cycle(self.store_db, now=when)
            while True:
                self._check_open()
                # Between requests, not into them (store.gate).
                with self.store_db.background_turn(_DEFER_S), self._lock:
                    started = time.perf_counter()
                    step = dynamics.decay_chunk(self.store_db, self.index, cycle,
                                                config=self.config.dynamics)
                    if step is None:
                        break
                    cycle, n, chunk_weak = step
                decayed += n
                weak += chunk_weak
                served = self._pause_after_step(started, served)
            pruned = 0  # the last cycle's, as before
            steps = dynamics.edge_steps(self.store_db, cycle, config=self.config.dynamics)
            while True:
                self._check_open()
                with self.store_db.background_turn(_DEFER_S), self._lock:
                    started = time.perf_counter()
                    try:
                        pruned += next(steps)
                    except StopIteration as done:
                        replayed = done.value
                        break
                served = self._pause_after_step(started, served)
            if not cycle.resumed:
                break
        report = dynamics.ConsolidationReport(decayed=decayed, marginalized=tuple(weak),
                                              pruned_edges=pruned, replayed=tuple(replayed))
        with self._lock:
            # Once per cycle, not per chunk: a save copies the whole index (a crash before
            # it is caught by the generation check).
            self._index_changed(len(weak))
            outgrown = needs_rebuild(self.index)
            if outgrown is not None:
                # A long-running robot switches to the index that suits its size here,
                # without waiting for a restart; the file follows once the store is idle
                # (until then the next open finds the old one outgrown and rebuilds).
                self.index = self.retriever.index = self._build_index()
                self.index_status = f'rebuilt at consolidation ({outgrown})'
                self._current_seq = None
                self._saver.request()
        if report.marginalized:
            self._emit('marginalized', report.marginalized, 'consolidation')
        return report

    def reflect(self, *, now: TimeLike | None = None, force: bool = False) -> list[MemoryUnit]:
        """Create reflection units when enough important experience has piled up."""
        planned = self.plan_reflection(now=now, force=force)
        if not planned:
            return []
        # One transaction for the insights and one for their evidence links (not one each):
        # reflection runs on the Store path, every ~30 observations of a busy robot.
        results = self.store_many([p.item for p in planned])
        stored: list[tuple[reflection.PlannedInsight, StoreResult]] = []
        for p, result in zip(planned, results, strict=True):
            if isinstance(result, BrainMemError):
                raise result
            stored.append((p, result))
        return self.link_reflections(stored)

    def plan_reflection(self, *, now: TimeLike | None = None, force: bool = False
                        ) -> list[reflection.PlannedInsight]:
        """The insights to store if a reflection is due (the units it covers are then marked
        reflected on), else []: the first half of :meth:`reflect`, for callers that store
        the insights themselves (the topic ingest, with its next batch) and then call
        :meth:`link_reflections`."""
        t = to_seconds(now, 'now')
        when = self.clock() if t is None else t
        with self._lock:
            units = reflection.due_units(self.store_db, self.config.dynamics, force=force)
        if not units:
            return []
        return reflection.plan(units, self.reasoner, now=when,
                               max_text_bytes=self.config.store.max_text_bytes)

    def link_reflections(self, stored: Sequence[tuple[reflection.PlannedInsight, StoreResult]]
                         ) -> list[MemoryUnit]:
        """Link stored insights to their evidence (one transaction) and say so; their units."""
        if not stored:
            return []
        edges: list[Edge] = []
        for p, result in stored:
            edges += reflection.evidence_edges(result.unit.id, p)
        self.store_db.add_edges(edges)
        created = [result.unit for _, result in stored]
        self._emit('reflected', [u.id for u in created])
        return created

    def protect(self, ids: Sequence[int]) -> list[int]:
        """Mark memories as core: never decayed, never marginalized."""
        return self.forget(ids, mode='protect')

    def forget(self, ids: Sequence[int], *, mode: ForgetMode | str = 'marginalize',
               confirm: bool = False) -> list[int]:
        """Marginalize / restore / protect / unprotect, or (with ``confirm``) delete memories."""
        check_forget(mode, confirm=confirm)
        with self._lock:
            units = self._units_or_raise(list(ids))
            uids = [u.id for u in units]
            if mode == 'marginalize':
                changed = [u.id for u in units if not u.marginalized and not u.protected]
                self._set_marginalized(changed, True)
            elif mode == 'restore':
                changed = [u.id for u in units if u.marginalized]
                # Restored by hand, a memory starts again as strong as a new one: left as weak
                # as it was, the next consolidation cycle marginalized it again.
                for u in units:
                    if u.marginalized and u.strength < dynamics.NEW_STRENGTH:
                        self.store_db.set_fields(u.id, strength=dynamics.NEW_STRENGTH)
                self._set_marginalized(changed, False)
            elif mode in ('protect', 'unprotect'):
                flag = mode == 'protect'
                changed = [u.id for u in units if u.protected != flag]
                self.store_db.set_flag(changed, column='protected', value=flag)
                if flag:
                    self._set_marginalized([u.id for u in units if u.marginalized], False)
            else:
                changed = uids
                with self.store_db.atomic():
                    self.facts.forget_units(uids)
                    self.store_db.delete_units(uids)
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
            self.store_db.set_flag(ids, column='marginalized', value=flag)
            self.store_db.bump_generation()
        arr = np.asarray(ids, dtype=np.int64)
        if flag:
            self.index.remove(arr)
        else:
            vecs = self.store_db.vectors(ids)
            self.index.remove(arr)  # never hold an id twice
            self.index.add(arr, np.stack([vecs[i] for i in ids]))
        self._index_changed(len(ids))

    def _pause_after_step(self, started: float, served: int) -> int:
        """Wait after a cycle's step that began at ``started`` (``time.perf_counter()``).

        At least as long as the step took (the cycle holds the lock at most half of the
        time); when requests started since the last step (``served`` then), until
        ``dynamics.BUSY_STEP_INTERVAL_S`` after its start. Returns ``served`` now.
        """
        took = time.perf_counter() - started
        now_served = self.store_db.gate.served
        pause = max(dynamics.CHUNK_PAUSE_S, took)
        if now_served != served:
            pause = max(pause, dynamics.BUSY_STEP_INTERVAL_S - took)
        time.sleep(pause)
        return now_served

    def _index_changed(self, count: int) -> None:
        # Saving copies the whole index under the lock, so it becomes due every
        # index_save_every changes and is taken once the store is idle (index_saver), and
        # at close. After a crash in between, new units are added to the saved file on
        # open; other changes made it stale (generation check) and it is rebuilt.
        self._unsaved += count
        if count:
            self._current_seq = None
        if self._unsaved >= self.config.store.index_save_every:
            self._saver.request()

    def _open_index(self) -> None:
        """Load the saved index and add the units stored after its save, or rebuild it."""
        generation = int(self.store_db.get_meta('index_generation', '0'))
        saved, why = load_index(self._index_path, dim=self.embedder.dim, generation=generation)
        if saved is not None:
            # Same generation: since the save, units were only added, with larger ids
            # (a removal would have changed it, and only a removal frees an id).
            added = 0
            for ids, vecs in self.store_db.iter_vectors(marginalized=False, after=saved.max_id):
                saved.index.add(ids, vecs)
                added += len(ids)
            outgrown = needs_rebuild(saved.index)
            if outgrown is None:
                self.index = saved.index
                self.index_status = f'loaded, {added} newer units added from the store' if added else 'loaded'
                self._unsaved = added
                self._current_seq = None if added else 0
                if added >= self.config.store.index_save_every:
                    self.save_index()
                return
            why = outgrown
        self.index = self._build_index()
        self.index_status = f'rebuilt from the store ({why})'
        self.save_index()

    def _index_snapshot(self) -> IndexSnapshot | None:
        """The index in memory, the store generation and the largest unit id it reflects,
        taken together; None when the store cannot record a save (read-only, full disk).

        A save starts a new generation: a store that later loses this commit (a lost
        ``-wal``) and then gives the ids of the units it lost to new ones is at an older
        generation, which the file does not match. Read under the memory's lock, which every unit's commit and
        index add hold together, ``max_id`` divides the units exactly: those in the copy,
        and those committed after it.
        """
        with self._lock:
            if self.store_db.read_only:
                return None
            try:
                # No fsync of its own: lost in a power cut, the store is at the previous
                # generation, which the file does not match either (a rebuild, never wrong).
                with self.store_db.atomic(durable=False, background=True):
                    generation = self.store_db.bump_generation()
                    max_id = self.store_db.max_id()
            except StoreError as exc:
                _log.warning('vector index not saved (%s); it will be rebuilt on next open', exc)
                return None
            self._unsaved = 0
            snap = snapshot_index(self.index, generation=generation, max_id=max_id)
            self._current_seq = snap.seq
            return snap

    def _index_file_current(self) -> bool:
        """Whether the index file holds the index as it is now: written since the last change
        (or loaded and not changed since). Call under the memory's lock."""
        return self._current_seq is not None and self._saver.written >= self._current_seq
