"""state_of through the StateOf service, the CLI and RViz markers, over real DDS."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip('rclpy')

import yaml
from brainmem_ros.msg import Observation
from brainmem_ros.srv import StateOf, Store
from geometry_msgs.msg import Pose as PoseMsg
from rosutil import call, node_env, node_process, running_node
from visualization_msgs.msg import Marker, MarkerArray

from brainmem_ros.memory.facts import Fact
from brainmem_ros.memory.types import Pose
from brainmem_ros.ros.convert import to_time
from brainmem_ros.ros.markers import fact_markers

pytestmark = pytest.mark.ros

T0 = 1_780_000_000.0
H = 3600.0


def observation(text: str, stamp: float, pose: tuple[float, float] | None = None) -> Store.Request:
    req = Store.Request()
    req.observation = Observation(text=text, source='test', episode_id='house')
    req.observation.header.stamp = to_time(stamp)
    if pose is not None:
        req.observation.has_pose = True
        req.observation.header.frame_id = 'map'
        req.observation.pose = PoseMsg()
        req.observation.pose.position.x, req.observation.pose.position.y = pose
        req.observation.pose.orientation.w = 1.0
    return req


def evidence_of(resp: Any) -> list[list[int]]:
    out, start = [], 0
    for count in resp.evidence_counts:
        out.append(list(resp.evidence[start:start + count]))
        start += count
    return out


def test_state_of_service_now_and_as_of(tmp_path: Path, model_paths: object) -> None:
    extra = {'stamp_future_tolerance_s': 1e9, 'fact_markers': True}
    with running_node(tmp_path / 'mem', extra=extra) as (_, client):
        ids = []
        for text, stamp, pose in (
                ('The silver laptop is on the desk.', T0, (1.0, 4.0)),
                ('Moved the silver laptop from the desk to the shelf.', T0 + 5 * H, (12.0, 3.0))):
            resp = call(client, Store, 'store', observation(text, stamp, pose))
            assert resp.success, resp.message
            ids.append(resp.id)

        now = call(client, StateOf, 'state_of', StateOf.Request(entity='The Silver Laptops',
                                                                attribute='location'))
        assert now.success, now.message
        assert list(now.values) == ['shelf', 'desk'] and list(now.holds) == [True, False]
        assert evidence_of(now) == [[ids[1]], [ids[0], ids[1]]]  # 'from the desk' confirms it
        assert now.valid_until[0].sec == 0 and now.valid_from[0].sec == int(T0 + 5 * H)
        assert now.has_pose[0] and now.poses[0].pose.position.x == 12.0
        assert now.poses[0].header.frame_id == 'map'

        then = call(client, StateOf, 'state_of', StateOf.Request(entity='laptop',
                                                                 as_of=to_time(T0 + H)))
        assert then.success and then.holds[0] and then.values[0] == 'desk'
        assert 'position' in list(then.attributes)
        assert all(f.sec <= int(T0 + H) for f in then.valid_from)

        unknown = call(client, StateOf, 'state_of', StateOf.Request(entity='purple giraffe'))
        assert unknown.success and not unknown.values and 'no facts' in unknown.message
        empty = call(client, StateOf, 'state_of', StateOf.Request(entity='  '))
        assert not empty.success and 'entity is empty' in empty.message
        for bad, words in ((StateOf.Request(entity='x' * 300), 'bytes'),
                           (StateOf.Request(entity='mug', attribute='a' * 100), 'attribute')):
            resp = call(client, StateOf, 'state_of', bad)
            assert not resp.success and words in resp.message and 'internal' not in resp.message


def test_fact_markers_are_published_behind_the_parameter(tmp_path: Path, model_paths: object) -> None:
    extra = {'stamp_future_tolerance_s': 1e9, 'fact_markers': True, 'markers_period_s': 0.2}
    with running_node(tmp_path / 'mem', extra=extra) as (_, client):
        resp = call(client, Store, 'store', observation('The red mug is on the counter.', T0, (2.0, 5.0)))
        assert resp.success, resp.message
        got: list[MarkerArray] = []
        seen = threading.Event()

        def on_markers(msg: MarkerArray) -> None:
            if any(m.ns == 'brainmem_facts' and m.action == Marker.ADD for m in msg.markers):
                got.append(msg)
                seen.set()

        sub = client.create_subscription(MarkerArray, 'memory_markers', on_markers, 1)
        try:
            assert seen.wait(30.0), 'no fact markers published'
        finally:
            client.destroy_subscription(sub)
        labels = [m for m in got[0].markers if m.ns == 'brainmem_facts' and m.action == Marker.ADD]
        # Both things the robot saw there: the mug and the counter it stands on.
        assert sorted(m.text.split(' (')[0] for m in labels) == ['counter', 'red mug']
        assert all((m.pose.position.x, m.pose.position.y) == (2.0, 5.0) for m in labels)
        assert all(m.header.frame_id == 'map' for m in labels)


def test_fact_markers_label_each_object_at_its_pose() -> None:
    facts = [Fact('red mug', 'position', '1.00 2.00 0.00 @ map', T0, None, (1,), T0, 'pose', 0.6,
                  pose=Pose(1.0, 2.0), id=7),
             Fact('door', 'state', 'open', T0, None, (2,), T0, 'text', 0.8, id=8)]
    array = fact_markers(facts, stamp=T0)
    assert array.markers[0].action == Marker.DELETEALL
    assert len(array.markers) == 2 and array.markers[1].id == 7
    assert array.markers[1].text.startswith('red mug (seen ')


def test_cli_state_with_as_of(tmp_path: Path, model_paths: object) -> None:
    params = {'data_dir': str(tmp_path / 'cli'), 'markers_period_s': 0.0,
              'stamp_future_tolerance_s': 1e9}
    path = tmp_path / 'params.yaml'
    path.write_text(yaml.safe_dump({'/**': {'ros__parameters': params}}))
    args = ['--ros-args', '--params-file', str(path), '-r', '__ns:=/r7']

    def cli(*words: str) -> str:
        out = subprocess.run([sys.executable, '-m', 'brainmem_ros.cli', '--ns', '/r7', '--timeout', '60',
                              *words], env=node_env(), capture_output=True, text=True, timeout=120,
                             check=False)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    with node_process(args, log=tmp_path / 'node.log'):
        cli('store', 'The garage door is open.')
        cli('store', 'The garage door is closed.')
        now = cli('state', 'Garage Doors')
        assert "* garage door.state = 'closed'" in now and "  garage door.state = 'open'" in now
        assert 'evidence [2]' in now
        # As of before anything was stored: nothing held yet.
        assert 'no facts' in cli('state', 'garage door', '--as-of', '1000')
