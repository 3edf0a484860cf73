"""Publish a rosbag2 (sqlite3 or mcap, split bags included) into the ROS graph."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

from brainmem_ros.bags import list_topics, read_bag
from brainmem_ros.errors import InvalidInputError


@dataclass(frozen=True)
class ReplayReport:
    """What a replay published."""

    messages: int
    per_topic: dict[str, int]
    seconds: float


def message_class(msgtype: str) -> Any:
    """The generated Python class of ``pkg/msg/Name`` (imported from installed packages only)."""
    parts = msgtype.split('/')
    if len(parts) != 3 or parts[1] != 'msg' or not all(p.isidentifier() for p in parts):
        msg = f'not a ROS 2 message type name: {msgtype!r}'
        raise InvalidInputError(msg)
    try:
        return getattr(importlib.import_module(f'{parts[0]}.msg'), parts[2])
    except (ImportError, AttributeError):
        msg = f'message type {msgtype} is not installed; cannot replay it'
        raise InvalidInputError(msg) from None


def replay(node: Node, bag: Path, *, rate: float = 1.0, topics: Sequence[str] | None = None,
           remap: dict[str, str] | None = None, wait_for_subscribers: float = 5.0,
           loop: bool = False, should_stop: Callable[[], bool] = lambda: False) -> ReplayReport:
    """Publish the bag's messages (still serialized) with their recorded spacing / ``rate``."""
    if not rate > 0:
        msg = f'rate must be positive, got {rate!r}'
        raise InvalidInputError(msg)
    remap = remap or {}
    infos = [t for t in list_topics(bag) if topics is None or t.name in topics]
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    publishers = {t.name: node.create_publisher(message_class(t.msgtype), remap.get(t.name, t.name), qos)
                  for t in infos}
    deadline = time.monotonic() + wait_for_subscribers
    while time.monotonic() < deadline and not all(p.get_subscription_count() for p in publishers.values()):
        time.sleep(0.05)
    counts = {name: 0 for name in publishers}
    start = time.monotonic()
    try:
        while True:
            first_ns: int | None = None
            t0 = time.monotonic()
            for message in read_bag(bag, topics=list(publishers)):
                if should_stop():
                    return ReplayReport(sum(counts.values()), counts, time.monotonic() - start)
                first_ns = message.timestamp_ns if first_ns is None else first_ns
                due = t0 + (message.timestamp_ns - first_ns) / 1e9 / rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                publishers[message.topic].publish(message.rawdata)
                counts[message.topic] += 1
            if not loop:
                break
    finally:
        # Reliable delivery: let subscribers acknowledge before the publishers go away.
        for pub in publishers.values():
            pub.wait_for_all_acked(Duration(seconds=5))
            node.destroy_publisher(pub)
    return ReplayReport(sum(counts.values()), counts, time.monotonic() - start)
