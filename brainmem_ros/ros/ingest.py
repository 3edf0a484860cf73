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
from collections.abc import Callable
from dataclasses import dataclass

from brainmem_ros.encoders.base import BatchEmbedder
from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.brainmem import BrainMem
from brainmem_ros.memory.index import search_threads
from brainmem_ros.memory.types import ObservationInput, PreparedBatch


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
        self._queue: queue.Queue[tuple[ObservationInput, bool] | None] = queue.Queue(maxsize=maxsize)
        # One batch waits between two stages at most: the writer never lags far behind.
        self._encoded: queue.Queue[tuple[list[ObservationInput], list[bool]] | None] = queue.Queue(maxsize=1)
        self._prepared: queue.Queue[tuple[PreparedBatch, list[bool]] | None] = queue.Queue(maxsize=1)
        self._threads = (
            threading.Thread(target=self._encode_loop, name='brainmem-ingest-encode', daemon=True),
            threading.Thread(target=self._prepare_loop, name='brainmem-ingest-prepare', daemon=True),
            threading.Thread(target=self._commit_loop, name='brainmem-ingest-commit', daemon=True),
        )
        for thread in self._threads:
            thread.start()

    def put(self, item: ObservationInput, *, share: bool = False) -> None:
        """Queue an observation (``share``: hand its unit to ``share`` once stored); never blocks."""
        try:
            self._queue.put_nowait((item, share))
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

    def _next_batch(self) -> tuple[list[tuple[ObservationInput, bool]], bool]:
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

    def _encode_loop(self) -> None:
        embedder = self.mem.embedder
        stop = False
        while not stop:
            pairs, stop = self._next_batch()
            if not pairs:
                continue
            batch = [_stripped(item) for item, _ in pairs]
            if isinstance(embedder, BatchEmbedder):
                try:
                    embedder.prime([i.text for i in batch if isinstance(i.text, str) and i.text])
                except Exception as exc:  # noqa: BLE001 - prepare meets the same error and refuses the batch
                    self._warn(f'encoding ahead failed ({exc!r}); the batch is encoded when prepared')
            self._encoded.put((batch, [share for _, share in pairs]))
        self._encoded.put(None)

    def _prepare_loop(self) -> None:
        search_threads()
        while (encoded := self._encoded.get()) is not None:
            batch, shares = encoded
            try:
                self._prepared.put((self.mem.prepare(batch), shares))
            except Exception as exc:  # noqa: BLE001 - the ingest thread must outlive any one batch
                self.counters.refused += len(batch)
                self._warn(f'{len(batch)} observation(s) not stored: {exc!r}')
        self._prepared.put(None)

    def _commit_loop(self) -> None:
        search_threads()
        while (item := self._prepared.get()) is not None:
            prepared, shares = item
            try:
                results = self.mem.commit(prepared)
            except Exception as exc:  # noqa: BLE001 - the ingest thread must outlive any one batch
                self.counters.refused += len(prepared.results)
                self._warn(f'{len(prepared.results)} observation(s) not stored: {exc!r}')
                continue
            to_share: list[int] = []
            for result, share in zip(results, shares, strict=True):
                if isinstance(result, BrainMemError):
                    self.counters.refused += 1
                    self._warn(f'observation not stored: {result}')
                else:
                    self.counters.stored += 1
                    if share:
                        to_share.append(result.unit.id)
            if to_share and self._share is not None:
                try:
                    self._share(to_share)
                except Exception as exc:  # noqa: BLE001 - stored is stored; sharing is an addition
                    self._warn(f'{len(to_share)} stored observation(s) not shared: {exc!r}')


def _stripped(item: ObservationInput) -> ObservationInput:
    """``item`` with its text stripped (as Store strips it), so what was parsed and encoded
    ahead is what the Store path looks up."""
    if isinstance(item.text, str) and item.text != item.text.strip():
        return dataclasses.replace(item, text=item.text.strip())
    return item
