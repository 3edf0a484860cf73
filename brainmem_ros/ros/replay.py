"""Publish a rosbag2 (sqlite3 or mcap, split bags included) into the ROS graph."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builtin_interfaces.msg import Time
from rclpy.duration import Duration
from rclpy.exceptions import InvalidTopicNameException
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.validate_topic_name import validate_topic_name
from rosgraph_msgs.msg import Clock

from brainmem_ros.bags import list_topics, read_bag
from brainmem_ros.errors import InvalidInputError

# Topics of the recording robot's own ROS plumbing: replayed into a live graph they
# would mix the bag's log lines and parameter changes into the live ones.
SKIPPED_TOPICS = ('/rosout', '/parameter_events')


@dataclass(frozen=True)
class ReplayReport:
    """What a replay published: messages per bag topic, and where each topic went."""

    messages: int
    per_topic: dict[str, int]
    seconds: float
    published_as: dict[str, str] = field(default_factory=dict)
    unsubscribed: tuple[str, ...] = ()  # live topics nobody subscribed to (bag names)
    #: For each of ``unsubscribed``: the live topics of its type that have a subscriber
    #: (under ``namespace`` when one was given), where a remap would have sent it.
    readers: dict[str, tuple[str, ...]] = field(default_factory=dict)


def target_topic(name: str, *, namespace: str = '', remap: dict[str, str] | None = None) -> str:
    """Where a bag topic is published: its remap, else the bag name under ``namespace``.

    ``/captions`` with namespace ``/robot9`` becomes ``/robot9/captions``; a remap
    target that is relative (``captions``) goes under the namespace too, an absolute
    one is used as it is.
    """
    remap = remap or {}
    target = remap.get(name, name)
    ns = namespace.strip('/')
    if not ns or (name in remap and target.startswith('/')):
        return target
    return f"/{ns}/{target.lstrip('/')}"


def parse_remaps(items: Sequence[str]) -> dict[str, str]:
    """``FROM:=TO`` pairs (as ``ros2 bag play --remap``) into a mapping."""
    out: dict[str, str] = {}
    for item in items:
        src, sep, dst = item.partition(':=')
        if not sep or not src or not dst:
            msg = f'remap must be FROM:=TO, got {item!r}'
            raise InvalidInputError(msg)
        try:
            validate_topic_name(dst)
        except InvalidTopicNameException as exc:
            msg = f'remap target {dst!r} is not a ROS topic name ({str(exc).splitlines()[0].rstrip(":")})'
            raise InvalidInputError(msg) from None
        out[src] = dst
    return out


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


def _select(bag: Path, topics: Sequence[str] | None, skip: Sequence[str]) -> list[Any]:
    """The bag's topics to replay; InvalidInputError naming the bag's topics when that is none
    of them, or when ``topics`` names one the bag does not have."""
    infos = list_topics(bag)
    names = ', '.join(t.name for t in infos) or 'none'
    missing = [name for name in topics or () if name not in {t.name for t in infos}]
    if missing:
        msg = f'not in bag {bag}: {", ".join(missing)} (its topics: {names})'
        raise InvalidInputError(msg)
    chosen = [t for t in infos if t.name in topics] if topics is not None else \
        [t for t in infos if t.name not in skip]
    if not chosen:
        msg = f'nothing to replay in bag {bag}: its topics ({names}) are all skipped; name them in topics'
        raise InvalidInputError(msg)
    return chosen


def _readers(node: Node, msgtype: str, namespace: str, exclude: set[str]) -> tuple[str, ...]:
    ns = '/' + namespace.strip('/') + '/' if namespace.strip('/') else '/'
    return tuple(sorted(name for name, types in node.get_topic_names_and_types()
                        if msgtype in types and name.startswith(ns) and name not in exclude
                        and node.count_subscribers(name)))


def replay(node: Node, bag: Path, *, rate: float = 1.0, topics: Sequence[str] | None = None,
           remap: dict[str, str] | None = None, namespace: str = '',
           skip: Sequence[str] = SKIPPED_TOPICS, wait_for_subscribers: float = 5.0,
           loop: bool = False, should_stop: Callable[[], bool] = lambda: False,
           clock: bool = False) -> ReplayReport:
    """Publish the bag's messages (still serialized) with their recorded spacing / ``rate``.

    Topics named in ``skip`` are not replayed unless ``topics`` names them. A topic in
    ``topics`` that the bag does not have, or nothing left to replay, is an InvalidInputError.
    ``clock``: publish the bag's time on ``/clock`` before each message (as ``ros2 bag play
    --clock``), for a node with ``use_sim_time``: what it stamps itself (a caption, which has
    no header) then gets the bag's time, like the stamped messages around it, not today's.
    """
    if not rate > 0:
        msg = f'rate must be positive, got {rate!r}'
        raise InvalidInputError(msg)
    infos = _select(bag, topics, skip)
    targets = {t.name: target_topic(t.name, namespace=namespace, remap=remap) for t in infos}
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    publishers = {t.name: node.create_publisher(message_class(t.msgtype), targets[t.name], qos)
                  for t in infos}
    ticker = node.create_publisher(Clock, '/clock', 10) if clock else None
    waited = [*publishers.values(), *([ticker] if ticker is not None else [])]
    deadline = time.monotonic() + wait_for_subscribers
    while time.monotonic() < deadline and not all(p.get_subscription_count() for p in waited):
        time.sleep(0.05)
    unsubscribed = tuple(name for name, p in publishers.items() if not p.get_subscription_count())
    types = {t.name: t.msgtype for t in infos}
    readers = {name: _readers(node, types[name], namespace, set(targets.values())) for name in unsubscribed}
    counts = {name: 0 for name in publishers}
    start = time.monotonic()

    def report() -> ReplayReport:
        return ReplayReport(sum(counts.values()), counts, time.monotonic() - start, targets, unsubscribed,
                            readers)

    try:
        while True:
            first_ns: int | None = None
            t0 = time.monotonic()
            for message in read_bag(bag, topics=list(publishers)):
                if should_stop():
                    return report()
                first_ns = message.timestamp_ns if first_ns is None else first_ns
                due = t0 + (message.timestamp_ns - first_ns) / 1e9 / rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                if ticker is not None:
                    _tick(ticker, message.timestamp_ns, first=message.timestamp_ns == first_ns)
                publishers[message.topic].publish(message.rawdata)
                counts[message.topic] += 1
            if not loop:
                break
    finally:
        _release(node, waited)
    return report()


def _tick(ticker: Any, stamp_ns: int, *, first: bool) -> None:
    """The bag's time on /clock; the first time, delivered before the replay goes on: the
    node's clock must hold it before the first message the node stamps itself arrives (until
    then a sim clock reads zero)."""
    sec, nanosec = divmod(stamp_ns, 10**9)
    ticker.publish(Clock(clock=Time(sec=sec, nanosec=nanosec)))
    if first:
        ticker.wait_for_all_acked(Duration(seconds=2))
        time.sleep(0.2)  # acknowledged is received, not yet applied by the node's executor


def _release(node: Node, publishers: Sequence[Any]) -> None:
    # Reliable delivery: let subscribers acknowledge before the publishers go away
    # (not after Ctrl-C shut the context down: nothing is delivered any more).
    for pub in publishers:
        if node.context.ok():
            try:
                pub.wait_for_all_acked(Duration(seconds=5))
            except _rclpy.RCLError:
                # Ctrl-C's shutdown of the context can land between the check and the
                # wait (rclpy shuts it down after raising KeyboardInterrupt).
                if node.context.ok():
                    raise
        node.destroy_publisher(pub)
