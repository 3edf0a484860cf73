"""Perception ingest: topic callbacks enqueue, two threads store batches.

DDS callbacks must never wait on the disk; batches let the store commit (and fsync)
once for many observations. A full queue drops the newest observation with a
warning instead of blocking perception or starving the services.

Storing is split in two stages with one batch in between: one thread extracts and
embeds (``BrainMem.prepare``, no lock, the encoder releases the GIL) while the other
deduplicates, links and commits the previous batch (``BrainMem.commit``). On two
cores the encoder and the writer then overlap instead of taking turns.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.brainmem import BrainMem
from brainmem_ros.memory.types import ObservationInput, PreparedBatch


@dataclass
class IngestCounters:
    """What the ingest thread did (reported by the Stats service)."""

    stored: int = 0
    refused: int = 0
    dropped: int = 0


class IngestWorker:
    """A bounded queue of observations and the thread that stores them in batches."""

    def __init__(self, mem: BrainMem, *, maxsize: int, batch_size: int,
                 warn: Callable[[str], None]) -> None:
        self.mem = mem
        self.batch_size = batch_size
        self.counters = IngestCounters()
        self._warn = warn
        self._queue: queue.Queue[ObservationInput | None] = queue.Queue(maxsize=maxsize)
        # One prepared batch waits at most: the writer never lags far behind the queue.
        self._prepared: queue.Queue[PreparedBatch | None] = queue.Queue(maxsize=1)
        self._threads = (
            threading.Thread(target=self._prepare_loop, name='brainmem-ingest-prepare', daemon=True),
            threading.Thread(target=self._commit_loop, name='brainmem-ingest-commit', daemon=True),
        )
        for thread in self._threads:
            thread.start()

    def put(self, item: ObservationInput) -> None:
        """Queue an observation; never blocks."""
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.counters.dropped += 1
            self._warn(f'ingest queue full ({self._queue.maxsize}): observation dropped')

    def depth(self) -> int:
        """Observations waiting."""
        return self._queue.qsize()

    def close(self, timeout: float = 60.0) -> None:
        """Store everything already queued, then stop."""
        self._queue.put(None)
        for thread in self._threads:
            thread.join(timeout)

    def _next_batch(self) -> tuple[list[ObservationInput], bool]:
        """Block for one observation, then take what else is queued; True = stop after it."""
        first = self._queue.get()
        if first is None:
            return [], True
        batch = [first]
        while len(batch) < self.batch_size:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                return batch, True
            batch.append(item)
        return batch, False

    def _prepare_loop(self) -> None:
        stop = False
        while not stop:
            batch, stop = self._next_batch()
            if not batch:
                continue
            try:
                self._prepared.put(self.mem.prepare(batch))
            except Exception as exc:  # noqa: BLE001 - the ingest thread must outlive any one batch
                self.counters.refused += len(batch)
                self._warn(f'{len(batch)} observation(s) not stored: {exc!r}')
        self._prepared.put(None)

    def _commit_loop(self) -> None:
        while (prepared := self._prepared.get()) is not None:
            try:
                results = self.mem.commit(prepared)
            except Exception as exc:  # noqa: BLE001 - the ingest thread must outlive any one batch
                self.counters.refused += len(prepared.results)
                self._warn(f'{len(prepared.results)} observation(s) not stored: {exc!r}')
                continue
            for result in results:
                if isinstance(result, BrainMemError):
                    self.counters.refused += 1
                    self._warn(f'observation not stored: {result}')
                else:
                    self.counters.stored += 1
