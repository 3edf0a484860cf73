"""Batched ingest stores what one-by-one Store stores: the same units, bit-identical vectors.

The topic ingest encodes a batch ahead on one thread, parses it on another (spaCy's
``nlp.pipe``) and commits it on a third; none of that may change what is remembered.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.types import MemoryUnit, ObservationInput, PreparedBatch, StoreResult, UnitType
from brainmem_ros.ros.ingest import IngestWorker

# Several styles, a repeated line (folded into the first as a near-duplicate), texts
# with surrounding whitespace (stripped as Store strips them) and one refused text.
TEXTS = [
    'Picked up the red cup from the kitchen table.',
    '[bt_navigator] Goal succeeded: reached waypoint loading_bay_2',
    'A golden retriever watches the robot from the rug in the living room.',
    'Grasp failed: the jar slipped out of the gripper.',
    '  Moved the keys from the drawer to the hall shelf.\n',
    'Anna said: please water the plants before the guests arrive.',
    'Detection: fire extinguisher (0.91) near the stairs',
    'Battery at 40 percent, fridge door open, dish rack empty.',
    'Picked up the red cup from the kitchen table.',
    'Tried to open the bedroom door, but it was locked.',
    '\tThe thermostat is set to 21 degrees.',
    'Localization lost near the garage; relocalized after 12 s.',
    '   ',
    'Took the remote from the sofa and put it on the TV stand.',
    'NavigateToPose aborted: path blocked by a box in corridor B.',
    'The cat knocked the vase off the shelf.',
]


def _items(base: float) -> list[ObservationInput]:
    return [ObservationInput(text, stamp=base + 7.0 * i, episode_id='batches', source='test')
            for i, text in enumerate(TEXTS)]


def _observations(mem: BrainMem) -> list[tuple[MemoryUnit, npt.NDArray[np.float32]]]:
    """Every non-reflection unit in id order, with its stored vector."""
    vectors = {int(i): v for ids, vecs in mem.store_db.iter_vectors(marginalized=False)
               for i, v in zip(ids, vecs, strict=True)}
    units = mem.store_db.get_units(list(vectors))
    return [(u, vectors[u.id]) for uid, u in sorted(units.items()) if u.type is not UnitType.REFLECTION]


def _same_units(got: list[tuple[MemoryUnit, Any]], want: list[tuple[MemoryUnit, Any]]) -> None:
    assert len(got) == len(want)
    for (g, gv), (w, wv) in zip(got, want, strict=True):
        assert (g.text, g.stamp, g.entities, g.actions, g.state_changes, g.outcome, g.repeats) == \
            (w.text, w.stamp, w.entities, w.actions, w.state_changes, w.outcome, w.repeats)
        assert g.importance == pytest.approx(w.importance) and g.valence == pytest.approx(w.valence)
        np.testing.assert_array_equal(gv, wv)


def _one_by_one(path: Path, items: list[ObservationInput]) -> BrainMem:
    mem = BrainMem.open(path)  # the default encoders, built as the node builds them
    for item in items:
        mem.store_many([item])  # one Store per observation; the empty one is refused
    return mem


def test_worker_batches_store_what_single_stores_store(tmp_path: Path, model_paths: object,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    items = _items(1_700_000_000.0)
    batched = BrainMem.open(tmp_path / 'batched')
    single = _one_by_one(tmp_path / 'single', items)
    try:
        sizes: list[int] = []
        real_prepare = batched.prepare

        def prepare(batch: Sequence[ObservationInput]) -> PreparedBatch:
            sizes.append(len(batch))
            return real_prepare(batch)

        monkeypatch.setattr(batched, 'prepare', prepare)
        worker = IngestWorker(batched, maxsize=100, batch_size=8, warn=lambda _: None)
        for item in items:
            worker.put(item)
        worker.close()
        assert max(sizes) > 1  # batches were formed (the first may be alone)
        assert worker.counters.stored == len(items) - 1 and worker.counters.refused == 1
        _same_units(_observations(batched), _observations(single))
        assert any(u.repeats for u, _ in _observations(batched))  # the repeated line was folded
    finally:
        batched.close()
        single.close()


@pytest.mark.ros
def test_a_burst_on_the_topic_stores_what_single_stores_store(tmp_path: Path, model_paths: object) -> None:
    from brainmem_ros.msg import Observation
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rosutil import running_node, wait_for

    base = float(int(time.time()) - 3600)
    items = _items(base)
    single = _one_by_one(tmp_path / 'single', items)
    try:
        with running_node(tmp_path / 'node', extra={'ingest_batch_size': 8}) as (node, client):
            sizes: list[int] = []
            real_prepare = node.mem.prepare

            def prepare(batch: Sequence[ObservationInput]) -> PreparedBatch:
                sizes.append(len(batch))
                prepared: PreparedBatch = real_prepare(batch)
                return prepared

            node.mem.prepare = prepare
            qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,  # type: ignore[no-untyped-call]
                             history=HistoryPolicy.KEEP_ALL)
            pub = client.create_publisher(Observation, 'observations', qos)
            assert wait_for(lambda: pub.get_subscription_count() > 0)
            for item in items:
                msg = Observation(text=item.text, episode_id='batches', source='test')
                msg.header.stamp.sec = int(item.stamp)  # type: ignore[arg-type]
                pub.publish(msg)
            counters = node._ingest.counters
            assert wait_for(lambda: counters.stored + counters.refused == len(items), timeout=60)
            assert counters.refused == 1
            assert max(sizes) > 1
            _same_units(_observations(node.mem), _observations(single))
    finally:
        single.close()


def test_each_item_of_a_batch_is_checked_before_any_is_parsed(mem_factory: Any) -> None:
    # A text over the limit or not UTF-8 reached the parser's batch call and failed every
    # item of the batch with it; a plain string raised out of store_many.
    mem: BrainMem = mem_factory()
    good = [ObservationInput(f'Box number {i} is on the shelf in the garage.') for i in range(3)]
    items: list[Any] = [good[0], ObservationInput('x' * 1_100_000), ObservationInput('bad \ud800 text'),
                        good[1], 'The door is open.', good[2]]
    results = mem.store_many(iter(items))  # any iterable, not only a sequence
    stored = [r for r in results if isinstance(r, StoreResult)]
    assert [r.unit.text for r in stored] == [g.text for g in good]
    messages = [str(r) for r in results if isinstance(r, BrainMemError)]
    assert len(messages) == 3
    assert 'bytes, more than' in messages[0] and 'UTF-8' in messages[1]
    assert 'not an ObservationInput' in messages[2]
