"""The node with its fleet tier on, over real DDS and a real PostgreSQL.

Robot 1 is a BrainMemNode configured by its ``fleet.*`` parameters; robot 2 a memory
with its FleetSync in this process. A Store with ``share`` reaches the server through
the node's background sync; robot 2 recalls it and rewards it; the node applies the
reward (its Retrieve shows the strength) and its own Retrieve with ``scope: fleet``
returns robot 2's memory, marked with robot 2's id. Stats reports the fleet tier.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from brainmem_ros.msg import Observation
from brainmem_ros.srv import Retrieve, Stats, Store
from rosutil import call, running_node, wait_for

from brainmem_ros.fleet.config import FleetConfig
from brainmem_ros.fleet.local_server import LocalPostgres, missing_reason, setup_fleet
from brainmem_ros.fleet.sync import FleetSync
from brainmem_ros.memory import BrainMem

pytestmark = [pytest.mark.ros,
              pytest.mark.skipif(bool(missing_reason()), reason=missing_reason() or 'server available')]


@pytest.fixture(scope='module')
def pg() -> Iterator[LocalPostgres]:
    server = LocalPostgres()
    server.start()
    yield server
    server.cleanup()


def _params(cfg: FleetConfig) -> dict[str, Any]:
    """The node's ``fleet.*`` parameters for a FleetConfig (lists never empty: ROS types them)."""
    return {f'fleet.{k}': (list(v) or [''] if isinstance(v, tuple) else v) for k, v in vars(cfg).items()}


def test_node_shares_recalls_and_learns_from_its_fleet(pg: LocalPostgres, tmp_path: Path, model_paths: object,
                                                       mem_factory: Any) -> None:
    configs = setup_fleet(pg, 'fleet_node', ['r1', 'r2'], fleet_id='a', secrets_dir=tmp_path / 'secrets',
                          dim=384, sync_period_s=0.2, retry_max_s=0.5)
    sync2 = FleetSync(configs['r2'])
    mem2: BrainMem = mem_factory(tmp_path / 'r2', on_event=sync2.observe)
    sync2.attach(mem2, start=False)
    try:
        with running_node(tmp_path / 'r1', extra=_params(configs['r1'])) as (_, client):
            req = Store.Request(observation=Observation(text='The lift in building B is out of order',
                                                        source='camera'), share=True)
            stored = call(client, Store, 'store', req)
            assert stored.success, stored.message
            # The node's sync thread drains the outbox; robot 2's poll and recall find it.
            assert wait_for(lambda: any(
                r.robot_id == 'r1' and r.memory.unit.id == stored.id
                for r in sync2.retrieve('is the lift in building B working?', scope='fleet').results),
                timeout=30)
            # Robot 2 rewards it; the node applies the reward to its own memory.
            assert sync2.reinforce('r1', [stored.id], reward=1.0, note='took the stairs') == 1
            sync2.sync_once()

            def strength() -> float:
                hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='lift building B', top_k=1))
                return float(hits.memories[0].unit.strength)

            before = 1.0
            assert wait_for(lambda: strength() > before, timeout=30)
            # Robot 2 shares a memory of its own; the node's fleet Retrieve returns it, marked.
            door = mem2.store('The east door of building B sticks in wet weather')
            sync2.share([door.id])
            sync2.sync_once()

            def fleet_hits() -> Any:
                return call(client, Retrieve, 'retrieve', Retrieve.Request(
                    query='does the east door stick?', top_k=5, scope='fleet'))

            assert wait_for(lambda: 'r2' in fleet_hits().robot_ids, timeout=30)
            answer = fleet_hits()
            assert answer.success and answer.fleet_reached
            pairs = zip(answer.memories, answer.robot_ids, strict=True)
            mine = [m.unit.id for m, rid in pairs if rid == 'r2']
            assert mine == [door.id]
            local = call(client, Retrieve, 'retrieve',
                         Retrieve.Request(query='does the east door stick?', top_k=5))
            assert set(local.robot_ids) <= {''} and door.text not in [m.unit.text for m in local.memories]
            # A perception module that wants an observation shared publishes it on the
            # shared topic: stored like any observation, then shared.
            pub = client.create_publisher(Observation, 'observations/shared', 10)
            assert wait_for(lambda: pub.get_subscription_count() > 0, timeout=10)
            pub.publish(Observation(text='The loading dock door in building C is jammed', source='camera'))
            assert wait_for(lambda: any(
                r.robot_id == 'r1' and 'loading dock' in r.memory.unit.text
                for r in sync2.retrieve('is the loading dock door working?', scope='fleet').results),
                timeout=30)
            # The ordinary topic stays private (the policy decides, and shares nothing here).
            own = client.create_publisher(Observation, 'observations', 10)
            assert wait_for(lambda: own.get_subscription_count() > 0, timeout=10)
            own.publish(Observation(text='The loading dock light is flickering', source='camera'))
            assert wait_for(lambda: 'flickering' in call(client, Retrieve, 'retrieve', Retrieve.Request(
                query='loading dock light flickering', top_k=1)).memories[0].unit.text, timeout=20)
            sync2.sync_once()
            assert all('flickering' not in r.memory.unit.text for r in
                       sync2.retrieve('loading dock light flickering', scope='fleet').results)
            stats = call(client, Stats, 'stats', Stats.Request())
            fleet = json.loads(stats.details_json)['fleet']
            assert fleet['enabled'] and fleet['robot_id'] == 'r1' and fleet['shared'] >= 1
            assert fleet['received_reinforcements'] >= 1 and fleet['last_sync'] > 0
    finally:
        sync2.close()
