"""Per-service handling times kept for Stats (brainmem_ros.ros.timings)."""

from __future__ import annotations

import threading

from brainmem_ros.ros.timings import ServiceTimings


def test_percentiles_cover_the_newest_calls_only() -> None:
    timings = ServiceTimings(held=100)
    for _ in range(100):
        timings.record('retrieve', 0.5)  # old slow calls, pushed out by the newer ones
    for i in range(100):
        timings.record('retrieve', 0.001 * (i + 1))
    timings.record('store', 0.002)
    summary = timings.summary()
    assert list(summary) == ['retrieve', 'store']
    r = summary['retrieve']
    assert r.calls == 200 and r.max_ms == 100.0
    assert 49.0 <= r.p50_ms <= 52.0 and 98.0 <= r.p99_ms <= 100.0
    assert summary['store'].calls == 1 and summary['store'].p50_ms == 2.0


def test_threads_record_without_losing_calls() -> None:
    timings = ServiceTimings()

    def work() -> None:
        for _ in range(500):
            timings.record('retrieve', 0.01)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert timings.summary()['retrieve'].calls == 2000
