"""Perception ingest: topic callbacks enqueue, one thread stores batches.

DDS callbacks must never wait on the disk; batches let the store commit (and fsync)
once for many observations. A full queue drops the newest observation with a
warning instead of blocking perception or starving the services.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.brainmem import BrainMem
from brainmem_ros.memory.types import ObservationInput


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
        self._thread = threading.Thread(target=self._run, name='brainmem-ingest', daemon=True)
        self._thread.start()

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
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = False
            while len(batch) < self.batch_size:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            for result in self.mem.store_many(batch):
                if isinstance(result, BrainMemError):
                    self.counters.refused += 1
                    self._warn(f'observation not stored: {result}')
                else:
                    self.counters.stored += 1
            if stop:
                return
