"""One clock through the node: odd stamps refused, a consolidation never hides the memory."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from brainmem_ros.msg import Observation
from brainmem_ros.srv import Consolidate, Retrieve, Stats, Store
from builtin_interfaces.msg import Time
from rosgraph_msgs.msg import Clock
from rosutil import call, running_node, wait_for

pytestmark = pytest.mark.ros

ROOMS = ['kitchen', 'hallway', 'bedroom', 'garage', 'bathroom']


def store(client: Any, text: str, *, sec: int = 0, nanosec: int = 0, episode: str = 'day-1') -> Any:
    obs = Observation(text=text, episode_id=episode)
    obs.header.stamp = Time(sec=sec, nanosec=nanosec)
    return call(client, Store, 'store', Store.Request(observation=obs))


def twenty(client: Any) -> None:
    for i in range(20):
        resp = store(client, f'The robot cleaned the {ROOMS[i % 5]} floor, pass {i}')
        assert resp.success, resp.message


def test_one_old_stamp_does_not_hide_everything(tmp_path: Path, model_paths: object) -> None:
    # No age limit: the old stamp gets in, and consolidation must cope with it alone.
    with running_node(tmp_path / 'mem', namespace='', extra={'max_stamp_age_s': 0.0}) as (_, client):
        twenty(client)
        old = store(client, 'The robot found a key under the mat', sec=100)
        assert old.success, old.message
        before = call(client, Stats, 'stats', Stats.Request())
        resp = call(client, Consolidate, 'consolidate', Consolidate.Request())
        assert resp.success, resp.message
        assert resp.marginalized <= 1, resp.message
        assert resp.pruned_edges <= before.edges // 10, resp.message
        after = call(client, Stats, 'stats', Stats.Request())
        assert after.active_units >= before.units - 1 and after.edges >= before.edges * 0.9
        hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='clean the kitchen floor', top_k=5))
        assert hits.success and len(hits.memories) == 5


def test_far_and_odd_stamps_are_refused(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem', namespace='') as (_, client):
        now = int(time.time())
        cases = {'before the node clock': dict(sec=100),           # 1970 on a wall clock
                 'ahead of the node clock': dict(sec=2**31 - 1),   # 2038
                 'nanosec': dict(sec=now, nanosec=4_000_000_000)}
        for expected, stamp in cases.items():
            resp = store(client, 'The robot saw a cat', **stamp)  # type: ignore[arg-type]
            assert not resp.success and expected in resp.message, (stamp, resp.message)
        ok = store(client, 'The robot saw a dog', sec=now - 3600)
        assert ok.success and abs(ok.unit.stamp.sec - (now - 3600)) <= 1
        assert call(client, Stats, 'stats', Stats.Request()).units == 1


def test_sim_time_is_the_one_clock(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem', namespace='', extra={'use_sim_time': True}) as (node, client):
        clock = client.create_publisher(Clock, '/clock', 10)
        sim = [1000]

        def tick() -> None:
            clock.publish(Clock(clock=Time(sec=sim[0])))

        timer = client.create_timer(0.05, tick)
        assert wait_for(lambda: node.get_clock().now().nanoseconds >= 1000 * 10**9)
        for i in range(10):
            stamped = store(client, f'The robot opened door {i} of the {ROOMS[i % 5]}',
                            sec=1000 if i % 2 else 0)
            assert stamped.success, stamped.message
            assert 990 <= stamped.unit.stamp.sec <= 1010  # unstamped ones get sim time too
        sim[0] = 1000 + 3600
        assert wait_for(lambda: node.get_clock().now().nanoseconds >= 4600 * 10**9)
        call(client, Consolidate, 'consolidate', Consolidate.Request())
        resp = call(client, Consolidate, 'consolidate', Consolidate.Request())
        assert resp.success and resp.marginalized == 0, resp.message
        stats = call(client, Stats, 'stats', Stats.Request())
        assert stats.active_units == stats.units
        client.destroy_timer(timer)
