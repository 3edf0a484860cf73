"""Lifecycle over real DDS: every transition request answered, the node serving on."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from brainmem_ros.msg import Observation
from brainmem_ros.srv import Retrieve, Stats, Store
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.lifecycle import LifecyclePublisher
from rosutil import call, running_node

pytestmark = pytest.mark.ros


def change(client: Any, label: str, transition_id: int = 0) -> bool:
    req = ChangeState.Request(transition=Transition(id=transition_id, label=label))
    # A bound, not a timing: under a loaded machine the service's discovery alone took
    # over 20 s once, while eight Stores were in flight.
    return bool(call(client, ChangeState, 'brainmem/change_state', req, timeout=60.0).success)


def state(client: Any) -> str:
    return str(call(client, GetState, 'brainmem/get_state', GetState.Request()).current_state.label)


def store(client: Any, text: str) -> Any:
    return call(client, Store, 'store', Store.Request(observation=Observation(text=text)))


def test_invalid_transitions_are_refused_in_every_state(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem') as (_, client):
        # active: configure and cleanup are not transitions of this state
        assert not change(client, 'configure')
        assert not change(client, 'cleanup')
        assert not change(client, '', Transition.TRANSITION_CONFIGURE)  # by id, too
        assert state(client) == 'active' and store(client, 'The red cup is on the table').success
        assert change(client, 'deactivate') and state(client) == 'inactive'
        # inactive: deactivate and configure are not
        assert not change(client, 'deactivate')
        assert not change(client, 'configure')
        assert change(client, 'cleanup') and state(client) == 'unconfigured'
        # unconfigured: cleanup, activate and deactivate are not
        for label in ('cleanup', 'activate', 'deactivate'):
            assert not change(client, label), label
        assert not change(client, 'no-such-transition')
        assert change(client, 'configure') and change(client, 'activate')
        assert state(client) == 'active'
        hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='where is the cup?', top_k=1))
        assert hits.success and 'red cup' in hits.memories[0].unit.text


def test_inactive_node_answers_every_request(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem') as (node, client):
        # ros2/demos lifecycle_py: lifecycle publishers made at configure, enabled on activate
        assert isinstance(node._events_pub, LifecyclePublisher) and node._events_pub.is_activated
        results: list[Any] = []
        texts = [f'Cup number {i} is on shelf {i}' for i in range(8)]
        callers = [threading.Thread(target=lambda t=t: results.append(store(client, t))) for t in texts]
        for c in callers:
            c.start()
        assert change(client, 'deactivate')
        for c in callers:
            c.join(30)
        assert len(results) == len(texts)  # in flight during deactivate: every one answered
        assert not node._events_pub.is_activated and node._events_pub is not None
        resp = store(client, 'The blue cup is in the sink')
        assert not resp.success and 'inactive' in resp.message
        stats = call(client, Stats, 'stats', Stats.Request())
        assert not stats.success and 'inactive' in stats.message
        assert change(client, 'activate')
        assert store(client, 'The blue cup is in the sink').success
