"""Input callbacks take the messages waiting on their subscription, in order, one at a time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import rclpy
from brainmem_ros.msg import Observation
from rclpy.context import Context
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosutil import running_node, wait_for
from std_msgs.msg import String

from brainmem_ros.ros.inputs import drain

pytestmark = pytest.mark.ros


def test_drain_takes_what_waits_in_order_up_to_its_limit() -> None:
    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node('drain_test', context=context)
    try:
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,  # type: ignore[no-untyped-call]
                         history=HistoryPolicy.KEEP_ALL)
        sub = node.create_subscription(String, 'drained', lambda _: None, qos)
        pub = node.create_publisher(String, 'drained', qos)
        assert wait_for(lambda: pub.get_subscription_count() > 0)
        for i in range(40):
            pub.publish(String(data=str(i)))
        got: list[str] = []
        end = time.monotonic() + 10
        while len(got) < 40 and time.monotonic() < end:
            before = len(got)
            taken = drain(sub, lambda m: got.append(m.data), limit=16)
            assert taken == len(got) - before <= 16
            if not taken:
                time.sleep(0.01)
        assert got == [str(i) for i in range(40)]
        assert drain(sub, got.append) == 0  # nothing waits: returns at once
        node.destroy_subscription(sub)
        assert drain(sub, got.append) == 0  # destroyed (deactivate): no error
    finally:
        node.destroy_node()  # type: ignore[no-untyped-call]
        rclpy.try_shutdown(context=context)


def test_a_burst_on_the_topic_is_stored_in_the_order_it_was_published(tmp_path: Path,
                                                                      model_paths: object) -> None:
    with running_node(tmp_path / 'mem') as (node, client):
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,  # type: ignore[no-untyped-call]
                         history=HistoryPolicy.KEEP_ALL)
        pub = client.create_publisher(Observation, 'observations', qos)
        assert wait_for(lambda: pub.get_subscription_count() > 0)
        texts = [f'Counted {i} boxes on shelf {i % 7} of the storeroom.' for i in range(300)]
        for text in texts:
            pub.publish(Observation(text=text))
        assert wait_for(lambda: node._ingest.counters.stored == len(texts), timeout=120)
        with node.mem.store_db.reading() as db:
            stored = [t for (t,) in db.execute("SELECT text FROM units WHERE type != 'reflection' "
                                               'ORDER BY id')]
        assert stored == texts
