"""An executor spun by brainmem_ros.ros.spin keeps serving while entities come and go."""

from __future__ import annotations

import os
import sys
import threading

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from std_msgs.msg import String

from brainmem_ros.ros.spin import SpinThread, spin

pytestmark = pytest.mark.ros


def test_spin_survives_entities_destroyed_while_it_waits() -> None:
    # What the node does on deactivate and replay does when it finishes: destroy
    # publishers and subscriptions (with their QoS event handlers) from another thread
    # while the executor builds its wait sets (ros2/rclpy#1284).
    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.0001)  # the node runs at 0.5 ms; shorter makes the race likelier
    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node('spin_test', context=context)
    executor = MultiThreadedExecutor(num_threads=2, context=context)
    executor.add_node(node)
    ticks = threading.Event()
    busy = node.create_timer(0.0005, lambda: None)  # keeps the executor rebuilding wait sets
    thread = threading.Thread(target=spin, args=(executor,), daemon=True)
    thread.start()
    try:
        for i in range(1500):
            sub = node.create_subscription(String, f'churn_{i % 7}', lambda _: None, 10)
            pub = node.create_publisher(String, f'churn_{i % 7}', 10)
            pub.publish(String(data='x'))
            node.destroy_publisher(pub)
            node.destroy_subscription(sub)
        timer = node.create_timer(0.01, ticks.set)
        assert ticks.wait(10.0), 'the executor stopped serving'
        assert thread.is_alive()
        node.destroy_timer(timer)
        node.destroy_timer(busy)
    finally:
        sys.setswitchinterval(switch)
        executor.shutdown()
        thread.join(10)
        node.destroy_node()  # type: ignore[no-untyped-call]
        rclpy.try_shutdown(context=context)
    assert not thread.is_alive()  # shutdown still ends it


def test_a_spin_thread_ends_its_loop_before_its_nodes_are_destroyed() -> None:
    # Shutting the executor down while its thread waited left that thread holding the node's
    # entities; destroy_node then waited for them forever (a test's teardown, once in CI).
    # SpinThread.stop ends the loop first: each round's teardown must return, thread gone.
    # Each round's participant is alone on a domain of its own: with peers of the session's
    # domain (other tests' nodes in this process), Fast DDS once deadlocked in
    # destroy_participant between its listener and a remote participant's liveliness check
    # (eProsima/Fast-DDS#6193, #6502), a hang of DDS's own and not the race tested here.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.0001)  # shorter switches make the race likelier
    session_domain = int(os.environ.get('ROS_DOMAIN_ID', '0'))
    try:
        for i in range(20):
            context = Context()
            rclpy.init(context=context, domain_id=_lone_domain(session_domain, i))
            node = rclpy.create_node(f'spin_stop_{i}', context=context)
            node.create_publisher(String, 'spin_stop', 10)
            node.create_timer(0.0005, lambda: None)  # keeps the executor in and out of its wait
            executor = SingleThreadedExecutor(context=context) if i % 2 else \
                MultiThreadedExecutor(num_threads=2, context=context)
            executor.add_node(node)
            spinning = SpinThread(executor, name=f'spin-stop-{i}')
            teardown = threading.Thread(target=lambda n=node, s=spinning: (s.stop(), n.destroy_node()),
                                        daemon=True)
            teardown.start()
            teardown.join(60)
            assert not teardown.is_alive(), f'round {i}: stop and destroy_node did not return'
            assert not spinning.running
            rclpy.try_shutdown(context=context)
    finally:
        sys.setswitchinterval(switch)


def _lone_domain(session_domain: int, i: int) -> int:
    # Domains 201-232 (the highest Fast DDS maps to UDP ports); the session's own domain
    # is 1-200 (conftest), so the rounds never share it.
    return 201 + (session_domain + i) % 32
