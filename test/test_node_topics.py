"""The node's topics: memory events, RViz markers, episode/goal inputs, run-time parameters."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from brainmem_ros.msg import MemoryEvent, Observation
from brainmem_ros.srv import Store
from geometry_msgs.msg import PoseWithCovarianceStamped
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rosutil import call, running_node, wait_for
from std_msgs.msg import String
from visualization_msgs.msg import Marker, MarkerArray

pytestmark = pytest.mark.ros


def test_events_markers_and_context_topics(tmp_path: Path, model_paths: object) -> None:
    extra = {'pose_topic': '/amcl_pose', 'markers_period_s': 0.0}
    with running_node(tmp_path / 'mem', namespace='', extra=extra) as (node, client):
        events: list[Any] = []
        markers: list[Any] = []
        lock = threading.Lock()

        def keep(into: list[Any]) -> Any:
            def callback(msg: Any) -> None:
                with lock:
                    into.append(msg)
            return callback

        client.create_subscription(MemoryEvent, 'memory_events', keep(events), 50)
        client.create_subscription(MarkerArray, 'memory_markers', keep(markers), 5)
        episode_pub = client.create_publisher(String, 'episode', 10)
        pose_pub = client.create_publisher(PoseWithCovarianceStamped, '/amcl_pose', 10)
        obs_pub = client.create_publisher(Observation, 'observations', 10)
        assert wait_for(lambda: episode_pub.get_subscription_count() > 0
                        and pose_pub.get_subscription_count() > 0)
        episode_pub.publish(String(data='evening-3'))
        pose = PoseWithCovarianceStamped()
        pose.header.frame_id = 'map'
        pose.pose.pose.position.x, pose.pose.pose.position.y = 2.5, -1.0
        pose_pub.publish(pose)
        assert wait_for(lambda: len(node._poses) > 0 and node.episode_id == 'evening-3')
        obs_pub.publish(Observation(text='The cat knocked the vase off the shelf'))
        assert wait_for(lambda: any(e.kind == 'created' for e in events))
        req = Store.Request(observation=Observation(text='I swept up the vase'))
        stored = call(client, Store, 'store', req)
        assert stored.unit.episode_id == 'evening-3' and stored.unit.has_pose
        assert stored.unit.pose.pose.position.x == pytest.approx(2.5)
        assert wait_for(lambda: any(
            any(m.type == Marker.SPHERE and m.header.frame_id == 'map' for m in arr.markers)
            for arr in markers))
        with lock:
            spheres = [m for arr in markers for m in arr.markers if m.type == Marker.SPHERE]
        assert {round(m.pose.position.x, 2) for m in spheres} == {2.5}


def _set(client: Any, name: str, value: ParameterValue) -> Any:
    req = SetParameters.Request(parameters=[ParameterMsg(name=name, value=value)])
    return call(client, SetParameters, 'brainmem/set_parameters', req).results[0]


def test_runtime_parameters_are_validated(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem', namespace='') as (node, client):
        ok = _set(client, 'memory.retrieval.w_act',
                  ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=0.9))
        assert ok.successful and node.mem.retriever.config.w_act == pytest.approx(0.9)
        bad = _set(client, 'memory.retrieval.hops',
                   ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=9))
        assert not bad.successful and node.mem.retriever.config.hops == 2
        ro = _set(client, 'data_dir', ParameterValue(type=ParameterType.PARAMETER_STRING, string_value='/x'))
        assert not ro.successful


def test_observation_gets_the_pose_of_its_stamp(tmp_path: Path, model_paths: object) -> None:
    """A caption that arrives after the robot moved on is remembered where it was seen."""
    with running_node(tmp_path / 'mem', namespace='', extra={'pose_topic': 'amcl_pose'}) as (node, client):
        pose_pub = client.create_publisher(PoseWithCovarianceStamped, 'amcl_pose', 10)
        assert wait_for(lambda: pose_pub.get_subscription_count() > 0)
        now = node.get_clock().now().nanoseconds * 1e-9
        for dt, x in ((-3.0, 1.0), (-2.0, 2.0), (-1.0, 3.0)):
            msg = PoseWithCovarianceStamped()
            msg.header.frame_id = 'map'
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(now + dt), int((now + dt) % 1 * 1e9)
            msg.pose.pose.position.x = x
            pose_pub.publish(msg)
        assert wait_for(lambda: len(node._poses) == 3)
        seen = Observation(text='A red umbrella leans against the hallway wall')
        seen.header.stamp.sec, seen.header.stamp.nanosec = int(now - 2.1), int((now - 2.1) % 1 * 1e9)
        stored = call(client, Store, 'store', Store.Request(observation=seen))
        assert stored.success and stored.unit.pose.pose.position.x == pytest.approx(2.0)
        dark = Observation(text='The hall is dark')
        unstamped = call(client, Store, 'store', Store.Request(observation=dark))
        assert unstamped.unit.pose.pose.position.x == pytest.approx(3.0)  # now: the newest pose
        early = Observation(text='The front door is closed')
        early.header.stamp.sec = int(now - 60.0)  # before every pose kept: no pose
        assert not call(client, Store, 'store', Store.Request(observation=early)).unit.has_pose
