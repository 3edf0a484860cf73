"""The topic ingest pipeline (prepare on one thread, commit on another) on a real store."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from dbfile import evidence_types, file_rows

from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.types import ObservationInput, PreparedBatch, StoreResult
from brainmem_ros.ros.ingest import IngestWorker


def _observations(n: int) -> list[ObservationInput]:
    rooms = ('kitchen', 'hallway', 'office', 'garage')
    return [ObservationInput(f'Observation {i}: the robot saw box number {i} in the {rooms[i % 4]}.',
                             stamp=1_000.0 + i, episode_id='ingest')
            for i in range(n)]


def test_everything_queued_is_stored_in_order_and_bad_items_are_refused(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    warnings: list[str] = []
    worker = IngestWorker(mem, maxsize=1000, batch_size=16, warn=warnings.append)
    items = _observations(120)
    items[7] = ObservationInput('   ', stamp=5.0)  # empty text
    items[50] = ObservationInput('x' * 70_000)  # over max_text_bytes
    for item in items:
        worker.put(item)
    worker.close()
    assert worker.counters.stored == 118
    assert worker.counters.refused == 2 and worker.counters.dropped == 0
    assert len(warnings) == 2 and all('not stored' in w for w in warnings)
    stored = file_rows(mem.store_db.path, "SELECT text FROM units WHERE episode_id = 'ingest' ORDER BY id")
    expected = [it.text for i, it in enumerate(items) if i not in (7, 50)]
    assert [r[0] for r in stored] == expected  # two threads, still the arrival order


def test_prepare_overlaps_commit(mem_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The point of the two stages: batch n+1 is prepared while batch n is being written.
    mem: BrainMem = mem_factory()
    committing = threading.Event()
    overlapped = threading.Event()
    real_prepare, real_commit = mem.prepare, mem.commit

    def prepare(batch: list[ObservationInput]) -> PreparedBatch:
        if committing.is_set():
            overlapped.set()
        return real_prepare(batch)

    def commit(prepared: PreparedBatch, *, reflect: bool = True) -> list[StoreResult | BrainMemError]:
        committing.set()
        overlapped.wait(5.0)  # hold the first commit until the next prepare has started
        committing.clear()
        return real_commit(prepared, reflect=reflect)

    monkeypatch.setattr(mem, 'prepare', prepare)
    monkeypatch.setattr(mem, 'commit', commit)
    worker = IngestWorker(mem, maxsize=1000, batch_size=8, warn=lambda _: None)
    items = _observations(8)
    for item in items:
        worker.put(item)
    committing.wait(5.0)
    for item in _observations(16)[8:]:
        worker.put(item)
    worker.close()
    assert overlapped.is_set()
    assert worker.counters.stored == 16


def test_a_failing_batch_does_not_stop_the_ingest(mem_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    mem: BrainMem = mem_factory()
    warnings: list[str] = []
    real_commit = mem.commit
    calls = [0]
    lost: list[int] = []

    def flaky(prepared: PreparedBatch, *, reflect: bool = True) -> list[StoreResult | BrainMemError]:
        calls[0] += 1
        if calls[0] == 1:
            lost.append(len(prepared.results))  # however many the first batch took
            raise RuntimeError('disk controller reset')
        return real_commit(prepared, reflect=reflect)

    monkeypatch.setattr(mem, 'commit', flaky)
    worker = IngestWorker(mem, maxsize=100, batch_size=4, warn=warnings.append)
    first = _observations(4)
    for item in first:
        worker.put(item)
    while calls[0] == 0:
        threading.Event().wait(0.01)
    for item in _observations(8)[4:]:
        worker.put(item)
    worker.close()
    assert worker.counters.refused == lost[0] and worker.counters.stored == 8 - lost[0]
    assert any('disk controller reset' in w for w in warnings)
    assert mem.stats().units == 8 - lost[0]


def _chores(n: int) -> list[ObservationInput]:
    """Important observations of one dishwasher: a reflection falls due every few of them."""
    return [ObservationInput(f'The dishwasher in the kitchen failed to start on attempt {i}.',
                             stamp=1_000.0 + 60 * i, episode_id='dishes', importance=8.0)
            for i in range(n)]


def _reflections(mem: BrainMem) -> list[tuple[int, str]]:
    return file_rows(mem.store_db.path, "SELECT id, text FROM units WHERE type = 'reflection' ORDER BY id")


def test_reflections_go_through_the_stages_and_link_to_their_evidence(mem_factory: Any) -> None:
    # The insights a commit makes due are written with a later batch (not inside the
    # commit), are not counted as observations, and link to what they were drawn from.
    mem: BrainMem = mem_factory()
    events: list[tuple[str, tuple[int, ...], str]] = []
    mem._on_event = lambda e: events.append((e.kind, e.ids, e.detail))
    warnings: list[str] = []
    worker = IngestWorker(mem, maxsize=1000, batch_size=8, warn=warnings.append)
    items = _chores(64)
    for item in items:
        worker.put(item)
    worker.close()
    assert warnings == []
    assert worker.counters.stored == len(items) and worker.counters.refused == 0
    reflections = _reflections(mem)
    assert reflections and all('dishwasher' in text for _, text in reflections)
    for uid, _ in reflections:
        evidence = evidence_types(mem.store_db.path, uid)
        assert evidence and all(t == 'observation' for t in evidence)
    # Each 'created' event names the type of its units: insights are not announced as observations.
    types = dict(file_rows(mem.store_db.path, 'SELECT id, type FROM units'))
    created = [(ids, detail) for kind, ids, detail in events if kind == 'created']
    assert all(types[i] == detail for ids, detail in created for i in ids)
    assert any(detail == 'reflection' for _, detail in created)
    assert sum(kind == 'reflected' for kind, _, _ in events) >= 1
    assert mem.stats().units == len(items) + len(reflections)


def test_insights_due_after_the_last_batch_are_stored_before_close_returns(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    warnings: list[str] = []
    worker = IngestWorker(mem, maxsize=1000, batch_size=64, warn=warnings.append)
    for item in _chores(30):  # one batch: its reflection is planned after its commit
        worker.put(item)
    worker.close()
    assert warnings == [] and worker.counters.stored == 30
    assert _reflections(mem)


def test_insights_do_not_wait_for_the_next_observation(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    warnings: list[str] = []
    worker = IngestWorker(mem, maxsize=1000, batch_size=64, warn=warnings.append)
    try:
        for item in _chores(30):
            worker.put(item)
        end = threading.Event()
        for _ in range(200):  # the stream stops here; the reflection still arrives
            if _reflections(mem):
                break
            end.wait(0.05)
        assert _reflections(mem)
    finally:
        worker.close()
    assert warnings == []


def test_an_item_put_after_close_is_counted_as_dropped(mem_factory: Any) -> None:
    # A topic callback may pass the node's checks just before the ingest closes: its item
    # went behind the end marker, never stored and never counted.
    mem: BrainMem = mem_factory()
    warnings: list[str] = []
    worker = IngestWorker(mem, maxsize=100, batch_size=4, warn=warnings.append)
    worker.put(_observations(1)[0])
    worker.close()
    worker.put(_observations(2)[1])
    assert worker.counters.stored == 1 and worker.counters.dropped == 1
    assert warnings == ['ingest closed (the node is shutting down): observation dropped']
    worker.close()  # a second close returns at once
