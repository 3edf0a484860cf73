"""Consolidation on one clock: per-unit elapsed time, bounded pruning, chunks, resumable."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from brainmem_ros.errors import BusyError, StoreError
from brainmem_ros.memory import BrainMem, dynamics

T0 = 1_780_000_000.0
DAY = 86400.0
TEXTS = ['The robot cleaned the kitchen floor', 'The robot watered the plant in the hallway',
         'The cat sleeps on the bedroom rug', 'The garage door squeaked', 'The bathroom tap dripped',
         'The user cooked pasta in the kitchen', 'The hallway light flickered at night',
         'The robot charged in the garage', 'The user read a book in the bedroom',
         'The robot mopped the bathroom floor']


def fill(mem: BrainMem, start: float) -> None:
    for i, text in enumerate(TEXTS):
        mem.store(text, stamp=start + 10 * i, episode_id='e')


def test_old_stamp_costs_only_its_own_unit(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    fill(mem, T0)
    old = mem.store('The robot found a key under the mat', stamp=100.0, episode_id='e')
    report = mem.consolidate(now=T0 + 3600)
    assert report.marginalized == (old.id,)
    assert mem.stats().active_units == len(TEXTS)
    assert all(u.strength > 0.99 for u in mem.get(list(range(1, len(TEXTS) + 1))))


def test_units_decay_from_their_own_time_since_the_last_cycle(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    first = mem.store('The robot cleaned the kitchen floor', stamp=T0)
    mem.consolidate(now=T0 + 10 * DAY)
    late = mem.store('The garage door squeaked', stamp=T0 + 19 * DAY)
    early = mem.store('The bathroom tap dripped', stamp=T0 + DAY)  # before the last cycle: clamped to it
    mem.consolidate(now=T0 + 20 * DAY)
    rate = mem.config.dynamics.decay_per_day
    strength = {u.id: u.strength for u in mem.get([first.id, late.id, early.id])}
    assert strength[late.id] == pytest.approx(2.718281828 ** (-rate * 1))
    assert strength[early.id] == pytest.approx(2.718281828 ** (-rate * 10))
    assert strength[first.id] == pytest.approx(2.718281828 ** (-rate * 20))


def test_pruning_never_wipes_the_graph_in_one_cycle(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    fill(mem, T0)
    mem.consolidate(now=T0 + 3600)
    edges = mem.stats().edges
    assert edges > 10
    report = mem.consolidate(now=T0 + 10_000 * DAY)  # a clock jump of decades
    assert 0 < report.pruned_edges <= edges // 10
    assert mem.stats().edges >= edges - edges // 10


def test_decay_runs_in_chunks_and_resumes_after_a_crash(mem_factory: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(dynamics, 'DECAY_CHUNK', 3)
    mem: BrainMem = mem_factory()
    fill(mem, T0)
    mem.consolidate(now=T0 + 3600)
    acquired = [0]
    real = mem._lock

    class CountingLock:
        def __enter__(self) -> None:
            real.acquire()
            if threading.current_thread() is worker and real._is_owned() and real._recursion_count() == 1:  # type: ignore[attr-defined]
                acquired[0] += 1

        def __exit__(self, *exc: object) -> None:
            real.release()

    mem._lock = CountingLock()  # type: ignore[assignment]
    worker = threading.Thread(target=lambda: mem.consolidate(now=T0 + 2 * DAY))
    worker.start()
    worker.join(60)
    mem._lock = real
    assert acquired[0] >= len(TEXTS) // 3 + 2  # the lock was free between chunks

    # A crash after the first chunk: the next call finishes that cycle, then runs its own.
    calls = [0]
    original = dynamics.decay_chunk

    def crash_after_one(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 2:
            raise RuntimeError('power cut')
        return original(*args, **kwargs)

    monkeypatch.setattr(dynamics, 'decay_chunk', crash_after_one)
    with pytest.raises(RuntimeError):
        mem.consolidate(now=T0 + 3 * DAY)
    monkeypatch.setattr(dynamics, 'decay_chunk', original)
    mem.consolidate(now=T0 + 4 * DAY)
    rate = mem.config.dynamics.decay_per_day
    strengths = [u.strength for u in mem.get(list(range(1, len(TEXTS) + 1)))]
    # every unit decayed exactly once since its stamp, the interrupted chunk included
    assert strengths == pytest.approx([2.718281828 ** (-rate * (4 * DAY - 10 * i) / DAY)
                                       for i in range(len(TEXTS))])


def hold_decay_steps(monkeypatch: Any) -> tuple[threading.Event, threading.Event]:
    """Each decay step of a cycle waits for the second event; the first is set on entry."""
    inside, go_on = threading.Event(), threading.Event()
    real = dynamics.decay_chunk

    def held(*args: Any, **kwargs: Any) -> Any:
        inside.set()
        assert go_on.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(dynamics, 'decay_chunk', held)
    return inside, go_on


def test_a_second_cycle_while_one_runs_is_refused(mem_factory: Any, monkeypatch: Any) -> None:
    # Two cycles at once decayed every unit twice: the second took up the first's saved,
    # unfinished cycle (a client retrying a Consolidate that timed out, or the timer).
    mem: BrainMem = mem_factory()
    first = mem.store('The robot cleaned the kitchen floor', stamp=T0)
    mem.consolidate(now=T0)
    inside, go_on = hold_decay_steps(monkeypatch)
    running = threading.Thread(target=mem.consolidate, kwargs={'now': T0 + 10 * DAY})
    running.start()
    try:
        assert inside.wait(30)
        with pytest.raises(BusyError, match='already running'):
            mem.consolidate(now=T0 + 10 * DAY)
    finally:
        go_on.set()
        running.join(30)
    rate = mem.config.dynamics.decay_per_day
    assert mem.get([first.id])[0].strength == pytest.approx(2.718281828 ** (-rate * 10))  # once
    mem.consolidate(now=T0 + 11 * DAY)  # and the next cycle runs


def test_close_stops_a_running_cycle_between_steps_and_the_next_open_finishes_it(
        mem_factory: Any, tmp_path: Any, monkeypatch: Any) -> None:
    # The node's shutdown closed the store between two steps of a cycle under way: the
    # next step failed on a closed database ("internal error" to the caller).
    path = tmp_path / 'mem'
    mem: BrainMem = mem_factory(path)
    fill(mem, T0)
    mem.consolidate(now=T0 + 100)
    monkeypatch.setattr(dynamics, 'DECAY_CHUNK', 3)  # several steps
    inside, go_on = hold_decay_steps(monkeypatch)
    errors: list[BaseException] = []

    def cycle() -> None:
        try:
            mem.consolidate(now=T0 + 10 * DAY)
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            errors.append(exc)

    running = threading.Thread(target=cycle)
    running.start()
    assert inside.wait(30)
    closing = threading.Thread(target=mem.close)
    closing.start()
    closing.join(0.5)
    assert closing.is_alive()  # close waits for the step under way
    go_on.set()
    running.join(30)
    closing.join(30)
    assert not closing.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], StoreError) and 'resumes' in str(errors[0])
    monkeypatch.undo()
    reopened: BrainMem = mem_factory(path)
    reopened.consolidate(now=T0 + 10 * DAY)  # finishes the cycle where it stopped
    rate = reopened.config.dynamics.decay_per_day
    for unit in reopened.get(list(range(1, len(TEXTS) + 1))):
        assert unit.strength == pytest.approx(2.718281828 ** (-rate * (10 * DAY - 100 - 0) / DAY), rel=1e-3)
