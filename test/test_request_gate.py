"""Background steps take their turn between requests, never inside one (store/gate.py)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from brainmem_ros.memory import BrainMem, dynamics
from brainmem_ros.memory.store.gate import RequestGate
from brainmem_ros.memory.types import ObservationInput

Interval = tuple[float, float]


def _overlaps(turns: list[Interval], requests: list[Interval]) -> list[tuple[Interval, Interval]]:
    return [(t, r) for t in turns for r in requests if t[0] < r[1] and r[0] < t[1]]


@contextlib.contextmanager
def _held_on_a_thread(block: Callable[[], AbstractContextManager[None]], seconds: float
                      ) -> Iterator[list[float]]:
    """Enter ``block()`` on another thread and hold it for ``seconds``; yields once it is
    entered, with a list that gets the time it was left; joins the thread on exit."""
    inside, ended = threading.Event(), [0.0]

    def hold() -> None:
        with block():
            inside.set()
            time.sleep(seconds)
            ended[0] = time.monotonic()

    worker = threading.Thread(target=hold)
    worker.start()
    inside.wait()
    try:
        yield ended
    finally:
        worker.join()


def test_a_turn_waits_for_the_request_under_way() -> None:
    gate = RequestGate()
    # The quiet spell never comes within 0.01 s; the claim is served when the request ends.
    with _held_on_a_thread(gate.request, 0.2) as ended, gate.turn(0.01, quiet_s=0.005, gap_s=30.0):
        turned = time.monotonic()
    assert turned >= ended[0] > 0


def test_a_request_waits_for_the_turn_under_way() -> None:
    gate = RequestGate()
    with _held_on_a_thread(lambda: gate.turn(0.01, quiet_s=0.0), 0.1) as ended, gate.request():
        started = time.monotonic()
    assert started >= ended[0] > 0


def test_back_to_back_requests_leave_gaps_for_turns() -> None:
    """A caller that never pauses still lets background work through, between its calls."""
    gate = RequestGate()
    requests: list[Interval] = []
    turns: list[Interval] = []
    stop = threading.Event()

    def background() -> None:
        while not stop.is_set():
            with gate.turn(0.02, quiet_s=0.005, gap_s=30.0):
                t = time.monotonic()
                time.sleep(0.001)
                turns.append((t, time.monotonic()))

    worker = threading.Thread(target=background)
    worker.start()
    try:
        while len(turns) < 10:
            with gate.request():
                t = time.monotonic()
                time.sleep(0.005)
                requests.append((t, time.monotonic()))
    finally:
        stop.set()
        worker.join()
    assert len(turns) >= 10
    assert not _overlaps(turns, requests)


def test_a_nested_request_does_not_wait_for_a_claim() -> None:
    """A request that calls another (Store reflecting, say) goes on although a turn is claimed."""
    gate = RequestGate()
    order: list[str] = []
    claimed = threading.Event()

    def background() -> None:
        claimed.set()
        with gate.turn(0.0, quiet_s=0.0, gap_s=30.0):
            order.append('turn')

    with gate.request():
        worker = threading.Thread(target=background)
        worker.start()
        claimed.wait()
        time.sleep(0.05)  # the claim is pending now (it waits for this request)
        with gate.request():
            order.append('nested')
        order.append('outer ends')
    worker.join()
    assert order == ['nested', 'outer ends', 'turn']


def test_consolidation_steps_run_between_retrieves(mem_factory: Any, monkeypatch: Any) -> None:
    """Through the real store: Retrieve back to back while a cycle runs; no step inside one."""
    monkeypatch.setattr(dynamics, 'DECAY_CHUNK', 20)
    monkeypatch.setattr(dynamics, 'BUSY_STEP_INTERVAL_S', 0.01)
    mem: BrainMem = mem_factory()
    rooms = ['kitchen', 'hallway', 'garage', 'bedroom', 'bathroom']
    things = ['cup', 'towel', 'book', 'plant', 'lamp', 'shoe', 'bag', 'key']
    mem.store_many([ObservationInput(f'The robot saw the {t} in the {r} at {i} o\'clock',
                                     stamp=1_780_000_000.0 + 60 * i, episode_id='e')
                    for i, (r, t) in enumerate((r, t) for r in rooms for t in things)])
    store = mem.store_db
    requests: list[Interval] = []
    steps: list[Interval] = []
    atomic, request = store.atomic, store.request

    @contextlib.contextmanager
    def timed_atomic(*args: Any, **kwargs: Any) -> Iterator[Any]:
        with atomic(*args, **kwargs) as db:
            t = time.monotonic()
            yield db
        if kwargs.get('background'):
            steps.append((t, time.monotonic()))

    @contextlib.contextmanager
    def timed_request() -> Iterator[None]:
        with request():
            t = time.monotonic()
            yield
            requests.append((t, time.monotonic()))

    monkeypatch.setattr(store, 'atomic', timed_atomic)
    monkeypatch.setattr(store, 'request', timed_request)
    report: list[dynamics.ConsolidationReport] = []
    worker = threading.Thread(target=lambda: report.append(mem.consolidate(now=1_780_100_000.0)))
    worker.start()
    while worker.is_alive():
        assert mem.retrieve('where is the cup?', top_k=5)
    worker.join()
    assert report and report[0].decayed >= len(rooms) * len(things)  # and the reflections
    assert len(steps) >= 4 and len(requests) >= 4  # several of each, interleaved
    assert not _overlaps(steps, requests)
