"""Two robots on one machine with the shipped parameter file: neither reads the other's input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from brainmem_ros.srv import Stats, Store
from conftest import REPO
from geometry_msgs.msg import PoseWithCovarianceStamped
from rosutil import call, running_node, wait_for
from std_msgs.msg import String

pytestmark = pytest.mark.ros


def shipped() -> dict[str, Any]:
    params = yaml.safe_load((REPO / 'config' / 'brainmem.yaml').read_text())['/**']['ros__parameters']

    def flatten(prefix: str, value: Any) -> dict[str, Any]:
        if isinstance(value, dict):
            return {n: v for k, sub in value.items() for n, v in flatten(f'{prefix}{k}.', sub).items()}
        return {prefix[:-1]: value}

    flat = flatten('', params)
    del flat['data_dir']
    flat['markers_period_s'] = 0.0
    return flat


def test_two_namespaces_keep_their_inputs_apart(tmp_path: Path, model_paths: object) -> None:
    params = shipped()
    assert not any(str(params[k]).startswith('/') for k in ('observation_topic', 'pose_topic'))
    with running_node(tmp_path / 'r1', namespace='/r1', extra=params) as (n1, c1), \
            running_node(tmp_path / 'r2', namespace='/r2', extra=params) as (n2, c2):
        captions = c1.create_publisher(String, '/r1/captions', 10)
        pose = c1.create_publisher(PoseWithCovarianceStamped, '/r1/amcl_pose', 10)
        assert wait_for(lambda: captions.get_subscription_count() == 1 and pose.get_subscription_count() == 1)
        msg = PoseWithCovarianceStamped()
        msg.header.frame_id = 'map'
        msg.pose.pose.position.x = 3.0
        pose.publish(msg)
        assert wait_for(lambda: len(n1._poses) > 0)
        captions.publish(String(data='A red mug on the kitchen counter'))
        assert wait_for(lambda: call(c1, Stats, 'stats', Stats.Request()).units == 1)
        assert call(c2, Stats, 'stats', Stats.Request()).units == 0 and len(n2._poses) == 0
        stored = call(c2, Store, 'store', Store.Request())
        assert not stored.success  # empty text; r2 answers on its own services only
        assert c2.get_namespace() == '/r2'
