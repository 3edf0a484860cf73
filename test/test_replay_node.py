"""Real rosbag2 files recorded by the ROS 2 project, replayed into a running node."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from brainmem_ros.srv import Retrieve, Stats
from conftest import FIXTURES
from rcl_interfaces.msg import Log
from rosutil import call, node_env, own_domain, own_namespace, running_node, wait_for

from brainmem_ros.bags import read_bag
from brainmem_ros.ros.replay import replay

pytestmark = pytest.mark.ros


@pytest.mark.parametrize('bag', ['talker_sqlite3', 'talker_mcap'])
def test_talker_bag_gives_one_unit_per_message(bag: str, tmp_path: Path, model_paths: object) -> None:
    source = FIXTURES / bag
    if not source.is_dir():
        pytest.skip(f'fixture bag {source} not present')
    copy = tmp_path / bag
    shutil.copytree(source, copy)
    with running_node(tmp_path / 'mem', namespace='', extra={'text_topics': ['/topic']}) as (_, client):
        report = replay(client, copy, rate=20.0, topics=['/topic'])
        assert report.per_topic == {'/topic': 10}
        assert wait_for(lambda: call(client, Stats, 'stats', Stats.Request()).units == 10)
        hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='Hello, world! 7', top_k=3))
        assert hits.memories[0].unit.text == 'Hello, world! 7'
        assert hits.memories[0].unit.source == '/topic'


def test_replay_with_clock_gives_what_the_node_stamps_the_bag_time(tmp_path: Path,
                                                                   model_paths: object) -> None:
    """std_msgs/String has no stamp: the node stamps it with its clock, which with
    use_sim_time and replay's /clock is the bag's time, not the day of the replay."""
    source = FIXTURES / 'talker_mcap'
    if not source.is_dir():
        pytest.skip(f'fixture bag {source} not present')
    copy = tmp_path / 'talker'
    shutil.copytree(source, copy)
    recorded = [m.timestamp_ns / 1e9 for m in read_bag(copy, topics=['/topic'])]
    extra = {'text_topics': ['/topic'], 'use_sim_time': True}
    with running_node(tmp_path / 'mem', namespace='', extra=extra) as (_, client):
        replay(client, copy, rate=20.0, topics=['/topic'], clock=True)
        assert wait_for(lambda: call(client, Stats, 'stats', Stats.Request()).units == 10)
        hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='Hello, world!', top_k=10))
    stamps = [m.unit.stamp.sec + m.unit.stamp.nanosec * 1e-9 for m in hits.memories]
    assert len(stamps) == 10
    assert all(min(recorded) - 1.0 <= t <= max(recorded) + 1.0 for t in stamps), (stamps, recorded)


def test_household_bag_attaches_poses(tmp_path: Path, model_paths: object) -> None:
    from brainmem_ros.bags.episode import write_episode_bag

    bag = write_episode_bag(tmp_path / 'household')
    extra = {'text_topics': ['/captions'], 'pose_topic': '/amcl_pose', 'observation_topic':
             '/brainmem/observations'}
    with running_node(tmp_path / 'mem', namespace='', extra=extra) as (_, client):
        report = replay(client, bag, rate=50.0)
        expected = report.per_topic['/brainmem/observations'] + report.per_topic['/captions']
        assert wait_for(lambda: call(client, Stats, 'stats', Stats.Request()).units >= expected - 2)
        hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='the milk in the fridge', top_k=3))
        top = hits.memories[0].unit
        assert top.has_pose and top.pose.header.frame_id == 'map'
        assert 0.0 < top.pose.pose.position.x < 5.0  # the fridge is in the kitchen


def test_split_bag_replayed_in_full(tmp_path: Path, model_paths: object) -> None:
    source = FIXTURES / 'wbag_sqlite3'
    if not source.is_dir():
        pytest.skip(f'fixture bag {source} not present')
    copy = tmp_path / 'wbag'
    shutil.copytree(source, copy)
    topics = ['AAA', 'BBB', 'CCC', 'DDD', 'EEE', 'FFF', 'GGG', 'HHH']
    # The split bag was recorded microseconds apart: a deep queue absorbs the burst.
    extra = {'text_topics': topics, 'qos_depth': 5000}
    with running_node(tmp_path / 'mem', namespace='', extra=extra) as (_, client):
        report = replay(client, copy)
        assert report.messages == 6074 and set(report.per_topic) == set(topics)
        # Counted by the ingest (units also holds the reflections the stream triggers).
        def stored() -> int:
            details = call(client, Stats, 'stats', Stats.Request()).details_json
            return int(json.loads(details)['ingest']['stored'])

        assert wait_for(lambda: stored() == 6074, timeout=600, period=1.0)


def test_replay_into_a_namespace_with_remaps(tmp_path: Path, model_paths: object) -> None:
    from brainmem_ros.ros.replay import parse_remaps, target_topic

    assert target_topic('/captions', namespace='/robot9') == '/robot9/captions'
    assert target_topic('/a', namespace='/robot9', remap={'/a': 'b'}) == '/robot9/b'
    assert target_topic('/a', namespace='/robot9', remap={'/a': '/x/b'}) == '/x/b'
    assert parse_remaps(['/topic:=chatter']) == {'/topic': 'chatter'}
    source = FIXTURES / 'talker_mcap'
    if not source.is_dir():
        pytest.skip(f'fixture bag {source} not present')
    copy = tmp_path / 'talker'
    shutil.copytree(source, copy)
    extra = {'text_topics': ['chatter']}
    with running_node(tmp_path / 'mem', namespace='/robot9', extra=extra) as (_, client):
        logs: list[Any] = []
        client.create_subscription(Log, '/rosout', logs.append, 100)
        report = replay(client, copy, rate=20.0, namespace='/robot9', remap={'/topic': 'chatter'})
        assert report.per_topic == {'/topic': 10}  # /rosout and /parameter_events skipped
        assert report.published_as == {'/topic': '/robot9/chatter'} and not report.unsubscribed
        assert wait_for(lambda: call(client, Stats, 'stats', Stats.Request()).units == 10)
        assert not any(m.name == 'talker' for m in logs)  # the bag's log lines stay in the bag
        nobody = replay(client, copy, rate=50.0, namespace='/robot8', wait_for_subscribers=0.5)
        assert nobody.unsubscribed == ('/topic',)


def test_cli_replay_warns_and_stops_cleanly(tmp_path: Path) -> None:
    source = FIXTURES / 'talker_mcap'
    if not source.is_dir():
        pytest.skip(f'fixture bag {source} not present')
    copy = tmp_path / 'talker'
    shutil.copytree(source, copy)
    cmd = [sys.executable, '-m', 'brainmem_ros.cli', '--ns', '/nobody', 'replay', str(copy), '--rate', '50']
    out = subprocess.run(cmd, env=node_env(), capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 3 and 'nobody subscribes to /nobody/topic' in out.stderr, out.stderr
    # Ctrl-C, and SIGTERM (a launch file or a supervisor stopping it): a clean exit either way
    # (SIGTERM left a traceback from rcl, whose handler had shut the context down mid-call).
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        with subprocess.Popen([*cmd[:-2], '--loop'], env=node_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as proc:
            time.sleep(8.0)
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=30)
        assert proc.returncode == code and 'Traceback' not in err, err


def cli_replay(ns: str, bag: Path, *words: str, domain: int | None = None
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, '-m', 'brainmem_ros.cli', '--ns', ns, 'replay', str(bag), *words],
                          env=node_env(domain), capture_output=True, text=True, timeout=120, check=False)


def test_cli_replay_refuses_a_topic_the_bag_lacks(tmp_path: Path) -> None:
    from brainmem_ros.bags.episode import write_episode_bag

    bag = write_episode_bag(tmp_path / 'household')
    out = cli_replay(own_namespace('cli'), bag, '--topics', '/captions', '/nope')
    # It printed "replayed 0 messages" and exited 0.
    assert out.returncode == 1 and not out.stdout, out.stdout + out.stderr
    assert out.stderr == (f'brainmem: error: not in bag {bag}: /nope '
                          '(its topics: /amcl_pose, /brainmem/observations, /captions)\n')


def test_cli_replay_into_a_namespace_names_the_remap_it_needs(tmp_path: Path, model_paths: object) -> None:
    # The README's `brainmem --ns /exp1 replay data/household_episode` published the bag's
    # /brainmem/observations as /exp1/brainmem/observations, which the node in /exp1 does
    # not read: 28 observations lost with a warning, and exit 0.
    from brainmem_ros.bags.episode import write_episode_bag

    bag = write_episode_bag(tmp_path / 'household')
    extra = {'text_topics': ['captions'], 'pose_topic': 'amcl_pose'}
    # The CLI is a process of its own: it and the node meet in a domain of their own
    # (rosutil.own_domain), and it waits longer than its default 5 s for a busy machine.
    domain = own_domain()
    with running_node(tmp_path / 'mem', extra=extra, domain=domain) as (node, client):
        ns = node.get_namespace()
        lost = cli_replay(ns, bag, '--rate', '50', '--wait', '20', domain=domain)
        assert lost.returncode == 3, lost.stdout + lost.stderr
        assert (f'brainmem: warning: nobody subscribes to {ns}/brainmem/observations (bag topic '
                f'/brainmem/observations): its 28 messages went nowhere; subscribed topics of its type: '
                f'{ns}/observations, {ns}/observations/shared (replay onto one with '
                '--remap /brainmem/observations:=observations)') in lost.stderr, lost.stderr
        kept = cli_replay(ns, bag, '--rate', '50', '--wait', '20', '--remap',
                          '/brainmem/observations:=observations', domain=domain)
        assert kept.returncode == 0 and not kept.stderr, kept.stderr
        assert f'/brainmem/observations x28 as {ns}/observations' in kept.stdout

        def stored() -> int:
            details = call(client, Stats, 'stats', Stats.Request()).details_json
            return int(json.loads(details)['ingest']['stored'])

        assert wait_for(lambda: stored() == 5 + 5 + 28, timeout=120), stored()  # captions twice
