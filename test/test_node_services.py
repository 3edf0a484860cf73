"""The node's services over real DDS with the generated interfaces and the real encoder."""

from __future__ import annotations

import gc
import json
import math
import sys
from pathlib import Path

import pytest
from dbfile import file_rows

pytest.importorskip('rclpy')

from brainmem_ros.msg import Observation
from brainmem_ros.srv import (
    Consolidate,
    Forget,
    Reinforce,
    Retrieve,
    SetContext,
    StateOf,
    Stats,
    Store,
)
from builtin_interfaces.msg import Time
from rclpy.lifecycle import TransitionCallbackReturn
from rosutil import call, running_node, wait_for

pytestmark = pytest.mark.ros


def observation(text: str, **fields: object) -> Store.Request:
    req = Store.Request()
    req.observation = Observation(text=text, episode_id='kitchen-1', source='test')
    for key, value in fields.items():
        setattr(req.observation, key, value)
    return req


def test_store_retrieve_reinforce_over_dds(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem') as (_, client):
        ids = []
        for text in ['I opened the fridge to get the milk',
                     'The knife was too dull to cut the bread',
                     'I watered the plant in the living room']:
            resp = call(client, Store, 'store', observation(text))
            assert resp.success, resp.message
            assert resp.unit.text == text and resp.id == resp.unit.id
            ids.append(resp.id)
        # the extractor may keep the compound ('fridge door'): the fridge is named either way
        assert any('fridge' in e.name for e in call(client, Store, 'store', observation(
            'The fridge door is open')).unit.entities)

        req = Retrieve.Request(query='keep the medicine cold', top_k=2)
        resp = call(client, Retrieve, 'retrieve', req)
        assert resp.success, resp.message
        assert len(resp.memories) == 2
        top = resp.memories[0]
        assert 'fridge' in top.unit.text
        assert top.score > 0 and 0 <= top.relevance <= 1 and list(top.path)[-1] == top.unit.id

        before = top.unit.strength
        resp = call(client, Reinforce, 'reinforce', Reinforce.Request(ids=[top.unit.id], reward=1.0))
        assert resp.success, resp.message
        assert resp.units[0].strength > before

        stats = call(client, Stats, 'stats', Stats.Request())
        assert stats.success and stats.units == 4 and stats.index_kind
        # What each service's callbacks took, next to the counts: 4 Stores, 1 Retrieve so far.
        served = json.loads(stats.details_json)['service_ms']
        assert served['store']['calls'] == 4 and served['retrieve']['calls'] == 1
        assert served['reinforce']['calls'] == 1 and 'stats' not in served
        r = served['retrieve']
        assert 0 < r['p50_ms'] <= r['p99_ms'] <= r['max_ms']


def test_bad_requests_get_clear_errors(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem') as (_, client):
        resp = call(client, Store, 'store', observation('   '))
        assert not resp.success and 'empty' in resp.message

        resp = call(client, Store, 'store', observation('x' * 5000))
        assert not resp.success and 'bytes' in resp.message

        req = observation('I am at the door', has_pose=True)
        req.observation.pose.position.x = math.nan
        resp = call(client, Store, 'store', req)
        assert not resp.success and 'pose.x' in resp.message

        resp = call(client, Retrieve, 'retrieve', Retrieve.Request(query=''))
        assert not resp.success and 'empty' in resp.message
        resp = call(client, Retrieve, 'retrieve', Retrieve.Request(query='cup', top_k=-3))
        assert not resp.success and 'top_k' in resp.message
        resp = call(client, Retrieve, 'retrieve', Retrieve.Request(query='cup', top_k=100000))
        assert not resp.success and 'top_k' in resp.message

        resp = call(client, Reinforce, 'reinforce', Reinforce.Request(ids=[424242], reward=0.5))
        assert not resp.success and '424242' in resp.message and list(resp.unknown_ids) == [424242]
        resp = call(client, Reinforce, 'reinforce', Reinforce.Request(ids=[1], reward=3.0))
        assert not resp.success and 'reward' in resp.message

        stored = call(client, Store, 'store', observation('The red cup is on the table'))
        resp = call(client, Forget, 'forget', Forget.Request(ids=[stored.id], mode='delete'))
        assert not resp.success and 'confirm' in resp.message
        resp = call(client, Forget, 'forget', Forget.Request(ids=[stored.id], mode='explode'))
        assert not resp.success and 'mode' in resp.message
        # Ids of another robot's memories, with no fleet tier to send them to: applied
        # here, they would reward whichever local memory has the same number.
        strength = 'SELECT strength FROM units WHERE id = ?'
        before = file_rows(tmp_path / 'mem' / 'memory.db', strength, (stored.id,))
        resp = call(client, Reinforce, 'reinforce', Reinforce.Request(ids=[stored.id], reward=1.0,
                                                                       robot_id='other'))
        assert not resp.success and 'fleet tier' in resp.message and 'other' in resp.message
        # A radius with no pose to measure from, and bounds before 1970: refused, not ignored.
        resp = call(client, Retrieve, 'retrieve', Retrieve.Request(query='cup', radius=2.0))
        assert not resp.success and 'use_pose' in resp.message
        resp = call(client, Retrieve, 'retrieve', Retrieve.Request(query='cup', as_of=Time(sec=-5)))
        assert not resp.success and 'as_of.sec' in resp.message
        resp = call(client, Retrieve, 'retrieve', Retrieve.Request(query='cup', since=Time(sec=-5)))
        assert not resp.success and 'since.sec' in resp.message
        resp = call(client, StateOf, 'state_of', StateOf.Request(entity='cup', as_of=Time(sec=-5)))
        assert not resp.success and 'as_of.sec' in resp.message
        # Nothing above harmed the one good unit.
        assert call(client, Stats, 'stats', Stats.Request()).units == 1
        assert file_rows(tmp_path / 'mem' / 'memory.db', strength, (stored.id,)) == before


def test_admin_services(tmp_path: Path, model_paths: object) -> None:
    with running_node(tmp_path / 'mem') as (node, client):
        resp = call(client, SetContext, 'set_context', SetContext.Request(episode_id='ep-7', goal='tidy up'))
        assert resp.success and resp.episode_id == 'ep-7' and node.goal == 'tidy up'
        req = Store.Request(observation=Observation(text='I put the book on the shelf'))
        stored = call(client, Store, 'store', req)
        assert stored.unit.episode_id == 'ep-7'
        resp = call(client, Forget, 'forget', Forget.Request(ids=[stored.id], mode='marginalize'))
        assert resp.success and list(resp.changed) == [stored.id]
        hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='book on the shelf'))
        assert stored.id not in [m.unit.id for m in hits.memories]
        hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='book on the shelf',
                                                                   include_marginalized=True))
        assert stored.id in [m.unit.id for m in hits.memories]
        resp = call(client, Forget, 'forget', Forget.Request(ids=[stored.id], mode='restore'))
        assert resp.success
        resp = call(client, Consolidate, 'consolidate', Consolidate.Request())
        assert resp.success, resp.message
        resp = call(client, Forget, 'forget', Forget.Request(ids=[stored.id], mode='delete', confirm=True))
        assert resp.success
        assert call(client, Stats, 'stats', Stats.Request()).units == 0


def test_memories_and_strengths_survive_restart(tmp_path: Path, model_paths: object) -> None:
    data = tmp_path / 'mem'
    with running_node(data) as (_, client):
        first = call(client, Store, 'store', observation('I stood on the chair to reach the book'))
        call(client, Store, 'store', observation('The dishwasher finished its cycle'))
        reinforced = call(client, Reinforce, 'reinforce', Reinforce.Request(ids=[first.id], reward=0.8))
        strength = reinforced.units[0].strength
    with running_node(data) as (_, client):
        stats = call(client, Stats, 'stats', Stats.Request())
        assert stats.units == 2
        hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='reach something high', top_k=1))
        assert hits.memories[0].unit.id == first.id
        assert hits.memories[0].unit.strength == pytest.approx(strength)


def test_missing_llm_keeps_the_fast_path(tmp_path: Path, model_paths: object) -> None:
    extra = {'memory.encoder.llm_enabled': True, 'memory.encoder.llm_model': str(tmp_path / 'no.gguf')}
    with running_node(tmp_path / 'mem', extra=extra) as (node, client):
        resp = call(client, Store, 'store', observation('I opened the fridge to get the milk'))
        assert resp.success and resp.unit.enrichment == 'pending'
        assert node.mem.enrichment.wait_idle(30)
        unit = node.mem.get([resp.id])[0]
        assert unit.enrichment.value == 'failed'
        note = file_rows(node.mem.store_db.path, 'SELECT enrichment_note FROM units WHERE id = ?', (resp.id,))
        assert 'no.gguf' in note[0][0]
        hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='milk', top_k=1))
        assert hits.success and hits.memories[0].unit.id == resp.id


def test_interpreter_is_tuned_for_latency(tmp_path: Path, model_paths: object) -> None:
    # Process-wide settings the node applies at configure (see node.tune_interpreter).
    from threadpoolctl import threadpool_info, threadpool_limits

    switch, threshold = sys.getswitchinterval(), gc.get_threshold()
    blas = {p['user_api']: p['num_threads'] for p in threadpool_info()}.get('blas')
    try:
        with running_node(tmp_path / 'mem', extra={'gil_switch_ms': 0.25, 'gc_gen0_threshold': 12345}):
            assert sys.getswitchinterval() == pytest.approx(0.00025)
            assert gc.get_threshold()[0] == 12345
            assert gc.get_freeze_count() > 0
            # numpy's OpenBLAS: one thread for a query's small products.
            assert all(p['num_threads'] == 1 for p in threadpool_info() if p['user_api'] == 'blas')
    finally:
        sys.setswitchinterval(switch)
        gc.set_threshold(*threshold)
        gc.unfreeze()
        if blas is not None:
            threadpool_limits(limits=blas, user_api='blas')


def test_queries_are_served_by_their_own_node(tmp_path: Path, model_paths: object) -> None:
    # Retrieve and StateOf: a node and executor of their own in the same namespace
    # (brainmem_ros/ros/query_server.py), the other services on the lifecycle node.
    with running_node(tmp_path / 'mem', namespace='/robot3') as (node, client):
        def services_of(name: str) -> set[str]:
            return {n for n, _ in client.get_service_names_and_types_by_node(name, '/robot3')}

        assert wait_for(lambda: {'/robot3/retrieve', '/robot3/state_of'} <= services_of('brainmem_recall'))
        assert '/robot3/store' in services_of('brainmem')
        assert not {'/robot3/retrieve', '/robot3/state_of'} & services_of('brainmem')
        stored = call(client, Store, 'store', observation('The red cup is on the kitchen table'))
        assert stored.success, stored.message
        resp = call(client, Retrieve, 'retrieve', Retrieve.Request(query='where is the red cup?', top_k=1))
        assert resp.success and resp.memories[0].unit.id == stored.id
        # Through a cleanup and a new configure the queries are served again.
        assert node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS
        assert node.trigger_cleanup() == TransitionCallbackReturn.SUCCESS
        assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
        resp = call(client, Retrieve, 'retrieve', Retrieve.Request(query='where is the red cup?', top_k=1))
        assert resp.success and resp.memories[0].unit.id == stored.id
