"""What the node accepts at its entry: byte limits, bounded values, option pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from brainmem_ros.msg import Observation
from brainmem_ros.srv import Retrieve, SetContext, Stats, Store
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rosutil import call, running_node, wait_for
from std_msgs.msg import String

pytestmark = pytest.mark.ros


def store(client: Any, text: str = 'The red cup is on the table', **fields: Any) -> Any:
    obs = Observation(text=text)
    for key, value in fields.items():
        setattr(obs, key, value)
    return call(client, Store, 'store', Store.Request(observation=obs))


def retrieve(client: Any, **fields: Any) -> Any:
    return call(client, Retrieve, 'retrieve', Retrieve.Request(query='where is the cup?', **fields))


def test_context_is_checked_in_bytes_like_store(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem') as (node, client):
        assert store(client).success
        resp = call(client, SetContext, 'set_context', SetContext.Request(episode_id='é' * 200))
        assert not resp.success and 'bytes' in resp.message  # 400 bytes > 256
        resp = call(client, SetContext, 'set_context', SetContext.Request(goal='ü' * 3000))
        assert not resp.success and 'bytes' in resp.message  # 6000 bytes > 4096
        assert node.episode_id == '' and node.goal == ''
        episode = client.create_publisher(String, 'episode', 10)
        goal = client.create_publisher(String, 'goal', 10)
        assert wait_for(lambda: episode.get_subscription_count() and goal.get_subscription_count())
        episode.publish(String(data='é' * 200))
        goal.publish(String(data='ü' * 3000))
        episode.publish(String(data='é' * 100))  # 200 bytes: fine
        assert wait_for(lambda: node.episode_id == 'é' * 100)
        assert node.goal == ''
        assert store(client, 'The blue cup is in the sink').success
        assert retrieve(client).success
        ok = call(client, SetContext, 'set_context', SetContext.Request(goal='ü' * 2000))
        assert ok.success and retrieve(client).success  # 4000 bytes: Retrieve takes it too


def test_odd_values_are_refused_with_a_message(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem') as (_, client):
        cases: dict[str, dict[str, Any]] = {
            'zero quaternion': {'has_pose': True},
            'beyond': {'has_pose': True, 'x': 1e300},
            'type must be one of': {'type': 'reflection'},
            'entities in one observation': {'entities': [f'thing {i}' for i in range(10000)]},
            'actions in one observation': {'actions': [f'act{i}' for i in range(5000)]},
        }
        for expected, fields in cases.items():
            obs = Observation(text='The red cup is on the table')
            x = fields.pop('x', None)
            for key, value in fields.items():
                setattr(obs, key, value)
            if fields.get('has_pose'):
                obs.pose.orientation.w = 1.0 if x is not None else 0.0
                obs.pose.position.x = x if x is not None else 0.0
            resp = call(client, Store, 'store', Store.Request(observation=obs))
            assert not resp.success and expected in resp.message, (expected, resp.message)
        obs = Observation(text='The green cup is on the shelf', has_pose=True)
        obs.pose.orientation.z = obs.pose.orientation.w = 2.0  # not unit: normalised
        resp = call(client, Store, 'store', Store.Request(observation=obs))
        assert resp.success and resp.unit.pose.pose.orientation.w == pytest.approx(2 ** -0.5)
        assert call(client, Stats, 'stats', Stats.Request()).units == 1


def _set(client: Any, **ints: int) -> Any:
    req = SetParameters.Request(parameters=[
        ParameterMsg(name=f'memory.retrieval.{k}',
                     value=ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=v))
        for k, v in ints.items()])
    return call(client, SetParameters, 'brainmem/set_parameters', req).results


def test_default_top_k_is_checked_against_max_top_k(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem') as (_, client):
        assert store(client).success
        (result,) = _set(client, default_top_k=150)
        assert not result.successful and 'max_top_k' in result.reason
        (result,) = _set(client, max_top_k=5)
        assert not result.successful and 'default_top_k' in result.reason
        assert retrieve(client).success  # top_k=0: the default, still within the maximum
    # the same check at start-up: configure fails
    with pytest.raises(AssertionError), \
            running_node(tmp_path / 'mem2', extra={'memory.retrieval.default_top_k': 150}):
        pass


def test_an_oversized_observation_on_the_topic_is_refused_alone(tmp_path: Path, model_paths: object) -> None:
    # One text over the limit travelled with its batch to the parser, which refused the
    # whole batch: the valid observations published around it were lost.
    with running_node(tmp_path / 'mem') as (node, client):
        pub = client.create_publisher(Observation, 'observations', 100)
        assert wait_for(pub.get_subscription_count)
        texts = [f'Box number {i} is on the shelf in the garage.' for i in range(20)]
        for text in texts[:10]:
            pub.publish(Observation(text=text))
        pub.publish(Observation(text='x' * 1_100_000))
        pub.publish(Observation(text='   '))
        for text in texts[10:]:
            pub.publish(Observation(text=text))
        assert wait_for(lambda: node._ingest.counters.stored == len(texts), timeout=120)
        assert node._ingest.counters.refused == 2
        assert call(client, Stats, 'stats', Stats.Request()).units == len(texts)


def test_retrieve_refuses_an_over_long_episode_and_a_time_out_of_range(tmp_path: Path,
                                                                        model_paths: object) -> None:
    # Retrieve answered "0 memories" for an episode_id longer than any stored one can be,
    # and took since.nanosec = 2^32 - 1 as 4.3 s; Store and SetContext refuse both.
    with running_node(tmp_path / 'mem') as (_, client):
        assert store(client).success
        resp = retrieve(client, episode_id='e' * 300)
        assert not resp.success and 'episode_id' in resp.message and 'bytes' in resp.message
        for field in ('since', 'until', 'as_of'):
            req = Retrieve.Request(query='where is the cup?')
            getattr(req, field).nanosec = 2 ** 32 - 1
            resp = call(client, Retrieve, 'retrieve', req)
            assert not resp.success and f'{field}.nanosec' in resp.message, resp.message
        assert retrieve(client, episode_id='e' * 200).success  # within the limit: fine
