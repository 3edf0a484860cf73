"""Background work waits for a quiet spell of the store: requests do not wait for it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from brainmem_ros.memory.store import SqliteStore


def _reads_until(store: SqliteStore, stop: threading.Event, last: list[float]) -> None:
    while not stop.is_set():
        store.max_id()
        last.append(time.monotonic())
        time.sleep(0.001)


def test_waits_for_the_reads_to_end(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'memory.db')
    stop, last = threading.Event(), [time.monotonic()]
    reader = threading.Thread(target=_reads_until, args=(store, stop, last))
    reader.start()
    try:
        threading.Timer(0.3, stop.set).start()
        store.wait_quiet(30.0)
        returned = time.monotonic()
    finally:
        stop.set()
        reader.join()
        store.close()
    assert returned >= last[-1]  # not before the last read of the stream


def test_a_stream_of_reads_delays_it_no_longer_than_its_limit(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'memory.db')
    stop, last = threading.Event(), [time.monotonic()]
    reader = threading.Thread(target=_reads_until, args=(store, stop, last))
    reader.start()
    try:
        store.wait_quiet(0.05)
        assert not stop.is_set()  # it returned while the reads went on
        reads = len(last)
        store.wait_quiet(0.05)
        assert len(last) > reads
    finally:
        stop.set()
        reader.join()
        store.close()


def test_background_commits_are_not_uses(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'memory.db')
    try:
        with store.atomic(durable=False, background=True):
            store.set_meta('k', 'v')
        before = store._last_use
        with store.atomic(durable=False, background=True):
            store.set_meta('k', 'w')
        assert store._last_use == before
        with store.atomic():
            store.set_meta('k', 'x')
        assert store._last_use > before
        assert store.get_meta('k') == 'x'
    finally:
        store.close()
