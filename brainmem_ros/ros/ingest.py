"""Perception ingest: topic callbacks enqueue, three threads store batches.

DDS callbacks must never wait on the disk; batches let the store commit (and fsync)
once for many observations. A full queue drops the newest observation with a
warning instead of blocking perception or starving the services.

Storing runs in three stages with at most one batch waiting between two of them:

1. *encode*: the sentence encoder computes the batch's vectors ahead
   (:class:`~brainmem_ros.encoders.base.BatchEmbedder`; ONNX Runtime releases the GIL);
2. *prepare*: the parser reads the batch (``BrainMem.prepare``: validation, extraction,
   and the vectors, now looked up);
3. *commit*: deduplicate, link and write the batch before (``BrainMem.commit``).

With the encoder and the parser in one stage, that stage took 6.2 ms of CPU per
observation against 3.6 for the commit, so the writer waited; apart, the three are
within a factor of two of each other and keep both cores busy. An embedder that
cannot prime is simply asked by ``prepare`` (two stages in effect).

Texts are stripped before they are parsed and encoded, as Store strips them: the
parse and the vector made ahead are then the ones the Store path asks for.

Reflection (without an LLM) runs through the same stages: after a commit the commit
thread only plans it (``BrainMem.plan_reflection``: the due check and the deterministic
summary), and its insights are encoded, parsed and written with a later batch, then
linked to their evidence. Reflecting inside the commit, as ``BrainMem.commit`` does for a
Store, cost the writer 0.7 ms of CPU per observation and about as long again waiting for
the parser the prepare stage was using (in-process, 3,000 observations); this way the
writer's CPU per observation fell from about 2.0 to 1.5 ms. The writer is the one stage
whose work grows with the store (searches, links, timelines), so it is the one kept
short. Insights still waiting when the ingest closes are stored before it ends.

FAISS's OpenMP thread count is a per-thread setting (libgomp keeps it in each thread's
own state; a thread that never set it uses one thread per core), so each ingest thread
sets it for itself. Left at two, every search of a Store woke a second OpenMP thread
that then spun at the team barrier: measured in the node, 4.4 ms of CPU per observation
in that thread alone, and the commit thread's own time fell from 5.3 to 3.7 ms per
observation once it searched alone.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from brainmem_ros.encoders.base import BatchEmbedder
from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.brainmem import BrainMem
from brainmem_ros.memory.index import search_threads
from brainmem_ros.memory.reflection import PlannedInsight
from brainmem_ros.memory.types import ObservationInput, PreparedBatch, StoreResult

#: What goes with each item through the stages: an observation's share flag (the shared
#: observation topic), or the planned insight the item stores.
Tag = bool | PlannedInsight


class _Wake:
    """Queued to start a batch when insights wait and no observation comes."""


@dataclass
class IngestCounters:
    """What the ingest thread did (reported by the Stats service)."""

    stored: int = 0
    refused: int = 0
    dropped: int = 0


class IngestWorker:
    """A bounded queue of observations and the threads that store them in batches."""

    def __init__(self, mem: BrainMem, *, maxsize: int, batch_size: int,
                 warn: Callable[[str], None], share: Callable[[list[int]], None] | None = None) -> None:
        self.mem = mem
        self.batch_size = batch_size
        self.counters = IngestCounters()
        self._warn = warn
        self._share = share
        # Each item with its share flag (the shared observation topic), through every stage.
        self._queue: queue.Queue[tuple[ObservationInput, bool] | _Wake | None] = queue.Queue(maxsize=maxsize)
        # Insights the commit thread planned, for the next batch (never bounded: a few per batch).
        self._insights: deque[PlannedInsight] = deque()
        # One batch waits between two stages at most: the writer never lags far behind.
        self._encoded: queue.Queue[tuple[list[ObservationInput], list[Tag]] | None] = queue.Queue(maxsize=1)
        self._prepared: queue.Queue[tuple[PreparedBatch, list[Tag]] | None] = queue.Queue(maxsize=1)
        # A callback that passed the node's checks can still put an item while close()
        # runs: behind the end marker it was never stored nor counted. Both take this lock.
        self._close_lock = threading.Lock()
        self._closed = False
        self._threads = (
            threading.Thread(target=self._encode_loop, name='brainmem-ingest-encode', daemon=True),
            threading.Thread(target=self._prepare_loop, name='brainmem-ingest-prepare', daemon=True),
            threading.Thread(target=self._commit_loop, name='brainmem-ingest-commit', daemon=True),
        )
        for thread in self._threads:
            thread.start()

    def put(self, item: ObservationInput, *, share: bool = False) -> None:
        """Queue an observation (``share``: hand its unit to ``share`` once stored); never blocks."""
        with self._close_lock:
            if self._closed:
                reason = 'ingest closed (the node is shutting down)'
            else:
                try:
                    self._queue.put_nowait((item, share))
                    return
                except queue.Full:
                    reason = f'ingest queue full ({self._queue.maxsize})'
            self.counters.dropped += 1
        self._warn(f'{reason}: observation dropped')

    def depth(self) -> int:
        """Observations waiting."""
        return self._queue.qsize()

    def close(self, timeout: float = 60.0) -> None:
        """Store everything already queued, then stop; later items are dropped (and counted)."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._queue.put(None)  # may wait for room: the threads drain the queue meanwhile
        for thread in self._threads:
            thread.join(timeout)

    def discard(self) -> int:
        """Drop what is still queued (counted as dropped) and stop after the batches under
        way: a close that was asked to hurry. Returns how many observations were dropped."""
        with self._close_lock:
            self._closed = True
            dropped = 0
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                dropped += isinstance(item, tuple)
            self.counters.dropped += dropped
        self._queue.put(None)  # the end marker (again, if the queue held it): there is room now
        return dropped

    def _next_batch(self) -> tuple[list[tuple[ObservationInput, bool]], bool]:
        """Block for one observation (or a wake), then take what else is queued; True = stop after it."""
        first = self._queue.get()
        if first is None:
            return [], True
        batch = [] if isinstance(first, _Wake) else [first]
        while len(batch) < self.batch_size:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                return batch, True
            if not isinstance(item, _Wake):
                batch.append(item)
        return batch, False

    def _encode_loop(self) -> None:
        embedder = self.mem.embedder
        stop = False
        while not stop:
            pairs, stop = self._next_batch()
            insights = self._take_insights()
            if not pairs and not insights:
                continue
            batch = [_stripped(i.item) for i in insights] + [_stripped(item) for item, _ in pairs]
            tags: list[Tag] = [*insights, *(share for _, share in pairs)]
            if isinstance(embedder, BatchEmbedder):
                try:
                    embedder.prime([i.text for i in batch if isinstance(i.text, str) and i.text])
                except Exception as exc:  # noqa: BLE001 - prepare meets the same error and refuses the batch
                    self._warn(f'encoding ahead failed ({exc!r}); the batch is encoded when prepared')
            self._encoded.put((batch, tags))
        self._encoded.put(None)

    def _take_insights(self) -> list[PlannedInsight]:
        taken: list[PlannedInsight] = []
        while True:
            try:
                taken.append(self._insights.popleft())
            except IndexError:
                return taken

    def _prepare_loop(self) -> None:
        search_threads()
        while (encoded := self._encoded.get()) is not None:
            batch, tags = encoded
            try:
                self._prepared.put((self.mem.prepare(batch), tags))
            except Exception as exc:  # noqa: BLE001 - the ingest thread must outlive any one batch
                self._count_refused(tags)
                self._warn(f'{len(batch)} item(s) not stored: {exc!r}')
        self._prepared.put(None)

    def _commit_loop(self) -> None:
        search_threads()
        while (item := self._prepared.get()) is not None:
            prepared, tags = item
            try:
                results = self.mem.commit(prepared, reflect=False)
            except Exception as exc:  # noqa: BLE001 - the ingest thread must outlive any one batch
                self._count_refused(tags)
                self._warn(f'{len(prepared.results)} item(s) not stored: {exc!r}')
                continue
            to_share: list[int] = []
            insights: list[tuple[PlannedInsight, StoreResult]] = []
            created = False
            for result, tag in zip(results, tags, strict=True):
                if isinstance(tag, PlannedInsight):
                    if isinstance(result, BrainMemError):
                        self._warn(f'reflection not stored: {result}')
                    else:
                        insights.append((tag, result))
                elif isinstance(result, BrainMemError):
                    self.counters.refused += 1
                    self._warn(f'observation not stored: {result}')
                else:
                    self.counters.stored += 1
                    created = created or result.created
                    if tag:
                        to_share.append(result.unit.id)
            self._after_commit(insights, reflect=created)
            if to_share and self._share is not None:
                try:
                    self._share(to_share)
                except Exception as exc:  # noqa: BLE001 - stored is stored; sharing is an addition
                    self._warn(f'{len(to_share)} stored observation(s) not shared: {exc!r}')
        # Insights planned after the last batch: no stage before this one runs any more.
        pending = self._take_insights()
        if pending:
            self._store_insights(pending)

    def _after_commit(self, insights: Sequence[tuple[PlannedInsight, StoreResult]], *,
                      reflect: bool) -> None:
        """Link the insights of this batch; plan the next reflection if this batch made one due."""
        try:
            self.mem.link_reflections(insights)
            planned = self.mem.plan_reflection() if reflect and self.mem.reflects_on_store else []
        except Exception as exc:  # noqa: BLE001 - the batch is stored; a reflection is an addition
            self._warn(f'reflection failed: {exc!r}')
            return
        if planned:
            self._insights.extend(planned)
            try:
                self._queue.put_nowait(_Wake())
            except queue.Full:
                pass  # observations are waiting: the next batch starts without a wake

    def _store_insights(self, planned: list[PlannedInsight]) -> None:
        try:
            results = self.mem.store_many([p.item for p in planned])
            self.mem.link_reflections([(p, r) for p, r in zip(planned, results, strict=True)
                                       if not isinstance(r, BrainMemError)])
        except Exception as exc:  # noqa: BLE001 - what was acknowledged is stored; this is an addition
            self._warn(f'reflection not stored: {exc!r}')

    def _count_refused(self, tags: Sequence[Tag]) -> None:
        self.counters.refused += sum(not isinstance(t, PlannedInsight) for t in tags)


def _stripped(item: ObservationInput) -> ObservationInput:
    """``item`` with its text stripped (as Store strips it), so what was parsed and encoded
    ahead is what the Store path looks up."""
    if isinstance(item.text, str) and item.text != item.text.strip():
        return dataclasses.replace(item, text=item.text.strip())
    return item
