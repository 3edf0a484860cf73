"""Asynchronous enrichment: the slow LLM catches up in the background.

Store never waits for it. Pending work is the ``enrichment`` column of the units
table, so it survives a restart; the in-memory queue is only a bounded cache of it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from brainmem_ros.encoders.base import Extractor, Reasoner
from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.config import EncoderConfig
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.store.facts import observe_facts
from brainmem_ros.memory.types import Edge, Enrichment, Entity, MemoryUnit, StateChange

_log = logging.getLogger(__name__)
_STOP = -1

#: Told of what enrichment did: (event kind, unit ids, detail).
Emit = Callable[[str, Sequence[int], str], None]


def merge(unit: MemoryUnit, entities: tuple[Entity, ...], actions: tuple[str, ...],
          changes: tuple[StateChange, ...], importance: float | None, valence: float | None
          ) -> MemoryUnit:
    """The unit with grounded LLM output added; it can only touch this unit's own fields."""
    keys = {e.key for e in unit.entities}
    change_keys = {(c.object, c.attribute) for c in unit.state_changes}
    return replace(
        unit,
        entities=unit.entities + tuple(e for e in entities if e.key and e.key not in keys),
        actions=tuple(dict.fromkeys(unit.actions + actions)),
        state_changes=unit.state_changes + tuple(c for c in changes
                                                 if (c.object, c.attribute) not in change_keys),
        importance=unit.importance if importance is None else max(1.0, min(10.0, importance)),
        valence=unit.valence if valence is None or unit.valence else max(-1.0, min(1.0, valence)),
        enrichment=Enrichment.DONE)


class EnrichmentWorker:
    """One background thread feeding units to the LLM extractor and reasoner.

    It writes through ``store`` under ``lock`` (the memory's lock), reports each
    unit through ``emit`` and calls ``after`` once a unit is enriched (the memory
    reflects then, if due).
    """

    def __init__(self, store: SqliteStore, lock: threading.RLock, extractor: Extractor,
                 reasoner: Reasoner | None, *, config: EncoderConfig, queue_size: int,
                 emit: Emit, after: Callable[[], Any]) -> None:
        self.store = store
        self.lock = lock
        self.config = config
        self._emit = emit
        self._after = after
        self.extractor = extractor
        self.reasoner = reasoner
        self._queue: queue.Queue[int] = queue.Queue(maxsize=queue_size)
        self._thread = threading.Thread(target=self._run, name='brainmem-enrichment', daemon=True)
        self._stopping = threading.Event()
        self.processed = 0
        self.failed = 0

    def start(self) -> None:
        """Resume parked work (pending or failed units), then start the thread."""
        for uid in self.store.pending_enrichment(limit=self._queue.maxsize):
            self._queue.put_nowait(uid)
        self._thread.start()

    def submit(self, uid: int) -> bool:
        """Queue a unit; False when the queue is full (the caller records the skip)."""
        try:
            self._queue.put_nowait(uid)
        except queue.Full:
            return False
        return True

    def depth(self) -> int:
        """Units waiting."""
        return self._queue.qsize()

    def wait_idle(self, timeout: float) -> bool:
        """Block until the queue is drained (tests, demo); False on timeout."""
        done = threading.Event()

        def waiter() -> None:
            self._queue.join()
            done.set()

        threading.Thread(target=waiter, daemon=True).start()
        return done.wait(timeout)

    def stop(self, timeout: float = 60.0) -> None:
        """Finish the unit in progress and park the rest (they stay pending on disk)."""
        self._stopping.set()
        try:
            self._queue.put_nowait(_STOP)
        except queue.Full:
            pass  # the thread sees _stopping after its current unit
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stopping.is_set():
            uid = self._queue.get()
            try:
                if uid == _STOP or self._stopping.is_set():
                    return
                try:
                    self._enrich(uid)
                except Exception:  # noqa: BLE001 - one unit's failure must not end the worker
                    # A store error (a full disk, a busy database) or a bug on one unit:
                    # the unit stays pending on disk (retried at the next start) and the
                    # worker goes on. Left to end the thread, it stopped every later
                    # enrichment until a restart, with only a traceback on stderr.
                    self.failed += 1
                    _log.exception('enrichment of memory %d failed; it stays pending', uid)
            finally:
                self._queue.task_done()

    def _enrich(self, uid: int) -> None:
        store = self.store
        unit = store.get_unit(uid)
        if unit is None or unit.enrichment is Enrichment.DONE:
            return
        try:
            extraction = self.extractor.extract(unit.text, known_entities=[e.name for e in unit.entities])
        except BrainMemError as exc:
            self.failed += 1
            store.set_enrichment(uid, Enrichment.FAILED, str(exc))
            self._emit('enrichment_failed', [uid], str(exc))
            return
        enriched = merge(unit, extraction.entities, extraction.actions, extraction.state_changes,
                         extraction.importance, extraction.valence)
        with self.lock, store.atomic():
            store.update_content(enriched)
            if extraction.dropped:
                store.set_enrichment(uid, Enrichment.DONE, f'{extraction.dropped} ungrounded item(s) dropped')
            if enriched.state_changes != unit.state_changes or enriched.entities != unit.entities:
                observe_facts(store, enriched)
        self._relate(enriched)
        self.processed += 1
        self._emit('enriched', [uid], f'{len(enriched.entities)} entities')
        self._after()

    def _relate(self, unit: MemoryUnit) -> None:
        cfg = self.config
        if self.reasoner is None or not cfg.relation_candidates:
            return
        # Candidates are the unit's strongest existing links: the engine chooses, never the model.
        edges = self.store.edges_of([unit.id], fanout=cfg.relation_candidates)[unit.id]
        others = self.store.get_units(e.dst if e.src == unit.id else e.src for e in edges)
        new_edges: list[Edge] = []
        for other in others.values():
            try:
                relation = self.reasoner.relate(other.text, unit.text)
            except BrainMemError as exc:
                _log.warning('relation inference failed for %d-%d: %s', other.id, unit.id, exc)
                continue
            if relation.kind is not None and relation.confidence >= cfg.relation_threshold:
                new_edges.append(Edge(other.id, unit.id, relation.kind, relation.confidence))
        if new_edges:
            self.store.add_edges(new_edges)
