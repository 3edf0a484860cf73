"""Background work waits for a quiet spell of the store: requests do not wait for it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from brainmem_ros.memory.store import SqliteStore


@contextmanager
def _stream_of_reads(path: Path) -> Iterator[tuple[SqliteStore, threading.Event, list[float]]]:
    """A store read every millisecond on another thread until the event is set (and the times)."""
    store = SqliteStore(path)
    stop, last = threading.Event(), [time.monotonic()]

    def reads() -> None:
        while not stop.is_set():
            store.max_id()
            last.append(time.monotonic())
            time.sleep(0.001)

    reader = threading.Thread(target=reads)
    reader.start()
    try:
        yield store, stop, last
    finally:
        stop.set()
        reader.join()
        store.close()


def test_waits_for_the_reads_to_end(tmp_path: Path) -> None:
    with _stream_of_reads(tmp_path / 'memory.db') as (store, stop, last):
        threading.Timer(0.3, stop.set).start()
        store.wait_quiet(30.0)
        returned = time.monotonic()
    assert returned >= last[-1]  # not before the last read of the stream (the reader has ended)


def test_a_stream_of_reads_delays_it_no_longer_than_its_limit(tmp_path: Path) -> None:
    with _stream_of_reads(tmp_path / 'memory.db') as (store, stop, last):
        store.wait_quiet(0.05)
        assert not stop.is_set()  # it returned while the reads went on
        reads = len(last)
        store.wait_quiet(0.05)
        # The reads go on: waiting held none of them up. (Polled, not timed: on a loaded machine
        # the reader thread can miss a 50 ms window; one fresh-clone run saw no read in it.)
        deadline = time.monotonic() + 10.0
        while len(last) <= reads and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(last) > reads


def test_background_commits_are_not_uses(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'memory.db')
    try:
        with store.atomic(durable=False, background=True):
            store.set_meta('k', 'v')
        before = store.gate.last_use
        with store.atomic(durable=False, background=True):
            store.set_meta('k', 'w')
        assert store.gate.last_use == before
        with store.atomic():
            store.set_meta('k', 'x')
        assert store.gate.last_use > before
        assert store.get_meta('k') == 'x'
    finally:
        store.close()
