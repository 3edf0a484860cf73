"""Observation bursts into a node process: every message stored or counted, never lost silently."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from brainmem_ros.msg import Observation
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosutil import node_process, wait_for
from test_node_process import Planner, params_file

pytestmark = pytest.mark.ros


def ingest(client: Any) -> dict[str, int]:
    counts: dict[str, int] = json.loads(client.stats().details_json)['ingest']
    return counts


def settled(client: Any, published: int) -> dict[str, int]:
    """The ingest counters once everything published is accounted for (or they stop moving)."""
    last: list[dict[str, int]] = [{}]

    def done() -> bool:
        now = ingest(client)
        still = now == last[0]
        last[0] = now
        return sum(now[k] for k in ('stored', 'refused', 'dropped', 'lost_dds')) >= published or still

    wait_for(lambda: done() and done(), timeout=300, period=2.0)
    return last[0]


def burst(planner: Planner, n: int, *, rate: float, keep_all: bool, prefix: str) -> None:
    history = HistoryPolicy.KEEP_ALL if keep_all else HistoryPolicy.KEEP_LAST
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,  # type: ignore[no-untyped-call]
                     history=history)
    pub = planner.node.create_publisher(Observation, '/rate/observations', qos)
    assert wait_for(lambda: pub.get_subscription_count() > 0)
    t0 = time.perf_counter()
    for i in range(n):
        delay = t0 + i / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        text = f'{prefix} {i}: the robot saw object {i * 7919 % 100003} in room {i % 97}'
        pub.publish(Observation(text=text))
    pub.wait_for_all_acked()
    planner.node.destroy_publisher(pub)


def test_bursts_are_stored_or_counted(tmp_path: Path, model_paths: object) -> None:
    args = ['--ros-args', '--params-file', str(params_file(tmp_path, tmp_path / 'rate')), '-r', '__ns:=/rate']
    planner = Planner()
    try:
        with node_process(args, log=tmp_path / 'node.log'):
            client = planner.client('/rate')
            # 3,000 back-to-back from a keep-all publisher: flow control holds them all.
            burst(planner, 3000, rate=1e9, keep_all=True, prefix='Burst')
            counts = settled(client, 3000)
            assert counts['stored'] == 3000, counts
            # 500 Hz for 6 s from a default (keep-last 10) publisher: whatever DDS could
            # not deliver is counted and logged, the rest stored.
            burst(planner, 3000, rate=500.0, keep_all=False, prefix='Paced')
            counts = settled(client, 6000)
            accounted = counts['stored'] + counts['refused'] + counts['dropped'] + counts['lost_dds']
            assert accounted == 6000, counts
            assert counts['stored'] >= 5700, counts
    finally:
        planner.close()
    if counts['lost_dds']:
        assert 'lost by DDS' in (tmp_path / 'node.log').read_text()
