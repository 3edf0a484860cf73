"""Crash safety: kill -9 the node process in the middle of Store bursts; nothing acknowledged is lost.

Each trial starts ``brainmem_node`` as its own process on the same data directory
(so every start after the first recovers from the previous kill), hammers Store
from a client, and SIGKILLs the process at a random moment, usually while a
request is in flight. Every acknowledged (id, text) is recorded. The node's own
view at each restart and, at the end, the crash image on disk and a fresh
``BrainMem.open`` must show every acknowledged unit intact, ``integrity_check``
ok, and a vector index that agrees with the database.

Short version (``make test``): 2 trials x 200 stores. Long (``make reliability``):
20 trials x 1,000 stores, with the index saved as often as every store so that
kills also land inside index writes.
"""
# mypy: disallow-untyped-calls=False

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip('rclpy')

from brainmem_ros.msg import Observation
from brainmem_ros.srv import Stats, Store
from reliability.checks import (
    acknowledged_problems,
    crash_image,
    index_problems,
    integrity,
    units_by_id,
)
from reliability.dds import DdsClient, NodeDiedError
from rosutil import node_process, own_domain, own_namespace

from brainmem_ros.memory import BrainMem

pytestmark = pytest.mark.ros

SOURCE = 'crash-test'
THINGS = ['red mug', 'blue towel', 'spare battery', 'garden hose', 'laundry basket', 'toolbox',
          'umbrella', 'cereal box', 'charging cable', 'house plant', 'remote control', 'backpack']
PLACES = ['on the kitchen table', 'under the sofa', 'next to the sink', 'in the hallway',
          'on the top shelf', 'by the front door', 'in the garage', 'beside the bed']


def text_for(trial: int, i: int, rng: random.Random) -> str:
    # The numbers make every text unique and keep near-duplicates from folding.
    return f'Check {trial}.{i}: the {rng.choice(THINGS)} is {rng.choice(PLACES)}, shelf {rng.randint(1, 999)}'


@dataclass
class Campaign:
    """What the client saw over all trials."""

    acked: dict[int, str] = field(default_factory=dict)
    in_flight: set[str] = field(default_factory=set)
    figures: list[str] = field(default_factory=list)


def run_trial(data_dir: Path, log: Path, campaign: Campaign, *, trial: int, stores: int,
              save_every: int, rng: random.Random) -> None:
    """One node life: recover, serve a burst of Store calls, die by SIGKILL."""
    # Each life in a namespace and a domain of its own: the killed one's endpoints linger in the
    # DDS graph until their lease ends, and the session's domain is crowded late in a run
    # (rosutil.own_domain).
    namespace, domain = own_namespace(f'crash{trial}'), own_domain()
    args = ['--ros-args', '-r', f'__ns:={namespace}', '-p', f'data_dir:={data_dir}',
            '-p', 'markers_period_s:=0.0', '-p', f'memory.store.index_save_every:={save_every}']
    with node_process(args, log=log, domain=domain) as proc, \
            DdsClient(f'crash_client_{trial}', namespace=namespace, domain=domain) as client:
        def alive() -> bool:
            return proc.poll() is None

        started = time.monotonic()
        client.wait_for_service(Store, 'store', alive=alive)
        client.wait_for_service(Stats, 'stats', alive=alive)
        stats = client.handshake(Stats, 'stats', Stats.Request(), alive=alive)
        up = time.monotonic() - started
        assert stats.success, stats.message
        details = json.loads(stats.details_json)
        # The node's own view after the previous kill: everything acknowledged is there,
        # and its index agrees with the store in size.
        assert stats.units >= len(campaign.acked), (stats.units, len(campaign.acked), log.read_text())
        # 'loaded' may say how many units stored since the last save it added from SQLite.
        assert details['index_status'].startswith(('loaded', 'rebuilt')), details
        assert details['index_size'] == stats.active_units, details

        kill_after = rng.randint(stores // 10, stores - 1)
        acked_here = 0
        acked_event = threading.Event()

        def killer() -> None:
            acked_event.wait(300)
            time.sleep(rng.uniform(0.0, 0.03))  # lands anywhere in the next request
            proc.kill()

        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        burst = time.monotonic()
        for i in range(stores * 10):
            text = text_for(trial, i, rng)
            req = Store.Request(observation=Observation(text=text, source=SOURCE,
                                                        episode_id=f'crash-{trial}'))
            try:
                resp = client.call(Store, 'store', req, alive=alive)
            except NodeDiedError:
                campaign.in_flight.add(text)
                break
            assert resp.success, resp.message
            assert resp.unit.text == text and resp.id == resp.unit.id
            assert resp.id not in campaign.acked, f'id {resp.id} acknowledged twice'
            campaign.acked[resp.id] = text
            acked_here += 1
            if acked_here == kill_after:
                acked_event.set()
        else:
            campaign.in_flight.add('')  # never reached: the killer always fires
        elapsed = time.monotonic() - burst
        proc.wait(30)
        thread.join(5)
        assert proc.returncode == -9, proc.returncode
        campaign.figures.append(
            f'trial {trial}: up+recovered in {up:.1f} s ({details["index_status"][:40]}), '
            f'{acked_here} acked in {elapsed:.1f} s ({acked_here / max(elapsed, 1e-9):.0f}/s), '
            f'save_every={save_every}, killed after ack {kill_after}')


def check_after(data_dir: Path, tmp: Path, campaign: Campaign, embedder: Any) -> None:
    """The crash image on disk, then a fresh BrainMem.open on the data directory."""
    image = crash_image(data_dir, tmp / 'image')
    assert integrity(image) == 'ok'
    found = units_by_id(image, source=SOURCE)
    assert acknowledged_problems(found, campaign.acked) == []
    extra = {uid: text for uid, text in found.items() if uid not in campaign.acked}
    # Only requests that were in flight at a kill may have landed, each at most once.
    assert set(extra.values()) <= campaign.in_flight, extra
    assert len(extra) == len(set(extra.values()))

    with BrainMem.open(data_dir, embedder=embedder) as mem:
        status = mem.index_status
        assert status.startswith(('loaded', 'rebuilt')), status
        assert index_problems(mem) == []
        assert mem.stats().active_units == len(mem.index)
        assert mem.store_db.integrity_problems() == []
        campaign.figures.append(f'final open: index {status}, {mem.stats().units} units')


def campaign(tmp_path: Path, embedder: Any, *, trials: int, stores: int, save_every: list[int],
             seed: int) -> Campaign:
    rng = random.Random(seed)
    data = tmp_path / 'mem'
    result = Campaign()
    for trial in range(trials):
        run_trial(data, tmp_path / f'node-{trial}.log', result, trial=trial, stores=stores,
                  save_every=rng.choice(save_every), rng=rng)
    check_after(data, tmp_path, result, embedder)
    print(f'\ncrash campaign (seed {seed}): {len(result.acked)} acknowledged, '
          f'{len(result.in_flight)} in flight at kills')
    print('\n'.join(result.figures))
    return result


def test_kill9_during_store_bursts_short(tmp_path: Path, embedder: Any) -> None:
    result = campaign(tmp_path, embedder, trials=2, stores=200, save_every=[7, 1000], seed=7)
    assert len(result.acked) >= 2


@pytest.mark.reliability_long
def test_kill9_during_store_bursts_long(tmp_path: Path, embedder: Any) -> None:
    result = campaign(tmp_path, embedder, trials=20, stores=1000, save_every=[1, 7, 50, 1000],
                      seed=20)
    assert len(result.acked) >= 20
