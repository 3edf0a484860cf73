"""Asynchronous enrichment, reflection and relation edges, with small deterministic fakes of the LLM."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rosutil import wait_for

from brainmem_ros.encoders.base import Insight, Relation
from brainmem_ros.errors import ExtractionError, StoreError
from brainmem_ros.memory import BrainMem, EdgeKind, Entity, MemoryConfig
from brainmem_ros.memory.types import Enrichment, Extraction, StateChange


class FakeLlm:
    """Deterministic stand-in for the slow LLM: grounded items, optionally gated or failing."""

    def __init__(self, *, gate: threading.Event | None = None, fail: bool = False) -> None:
        self.gate = gate
        self.fail = fail
        self.calls = 0

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        self.calls += 1
        if self.gate is not None:
            self.gate.wait(30)
        if self.fail:
            msg = 'model output was not valid JSON'
            raise ExtractionError(msg)
        words = [w.strip('.,').lower() for w in text.split()]
        changes: tuple[StateChange, ...] = ()
        if 'moved' in words and 'to' in words:
            changes = (StateChange('cup', 'location', '', words[-1]),)
        return Extraction(entities=(Entity('vase', 'object'),) if 'vase' in words else (),
                          state_changes=changes, importance=9.0, valence=-0.5)


class FakeReasoner:
    """Says every pair is 'causes' with confidence 0.9; reflection cites the first two units."""

    def relate(self, first: str, second: str) -> Relation:
        return Relation(EdgeKind.CAUSES, 0.9)

    def reflect(self, texts: Sequence[str]) -> list[Insight]:
        return [Insight('The robot keeps working in the kitchen.', (0, 1))]


def test_store_never_waits_for_enrichment(mem_factory: Any) -> None:
    gate = threading.Event()
    llm = FakeLlm(gate=gate)
    mem: BrainMem = mem_factory(llm_extractor=llm)
    unit = mem.store('The cat knocked the vase off the shelf')  # returns while the LLM is blocked
    assert unit.enrichment is Enrichment.PENDING
    gate.set()
    assert mem.enrichment is not None and mem.enrichment.wait_idle(30)
    done = mem.get([unit.id])[0]
    assert done.enrichment is Enrichment.DONE and done.importance == 9.0
    assert 'vase' in {e.key for e in done.entities}


def test_pending_work_survives_restart(tmp_path: Path, embedder: Any) -> None:
    gate = threading.Event()
    with BrainMem.open(tmp_path / 'm', embedder=embedder, llm_extractor=FakeLlm(gate=gate)) as mem:
        ids = [mem.store(f'I wiped shelf number {i}').id for i in range(3)]
        gate.set()  # the first one may finish; close() parks the rest
    with BrainMem.open(tmp_path / 'm', embedder=embedder, llm_extractor=FakeLlm()) as mem:
        assert mem.enrichment is not None and mem.enrichment.wait_idle(30)
        assert all(u.enrichment is Enrichment.DONE for u in mem.get(ids))


def test_full_queue_skips_and_failures_are_recorded(mem_factory: Any) -> None:
    gate = threading.Event()
    config = MemoryConfig.from_mapping({'encoder.queue_size': 1})
    mem: BrainMem = mem_factory(config=config, llm_extractor=FakeLlm(gate=gate))
    units = [mem.store(f'Box {i} is in the garage') for i in range(4)]
    states = [u.enrichment for u in mem.get([u.id for u in units])]
    assert Enrichment.SKIPPED in states
    gate.set()
    failing: BrainMem = mem_factory(Path(str(mem.path) + '-f'), llm_extractor=FakeLlm(fail=True))
    unit = failing.store('The vase is broken')
    assert failing.enrichment is not None and failing.enrichment.wait_idle(30)
    after = failing.get([unit.id])[0]
    assert after.enrichment is Enrichment.FAILED and after.text == unit.text  # fast path intact


def test_relations_and_llm_reflection(mem_factory: Any) -> None:
    config = MemoryConfig.from_mapping({'dynamics.reflect_threshold': 15.0})
    mem: BrainMem = mem_factory(config=config, llm_extractor=FakeLlm(), reasoner=FakeReasoner())
    a = mem.store('I left the vase on the edge of the table', episode_id='k')
    b = mem.store('The vase fell and broke', episode_id='k')
    assert mem.enrichment is not None and mem.enrichment.wait_idle(30)
    edges = mem.store_db.edges_of([b.id], fanout=50)[b.id]
    assert any(e.kind is EdgeKind.CAUSES and (e.src, e.dst) == (a.id, b.id) for e in edges)
    reflections = [u for u in mem.get(list(range(1, mem.store_db.max_id() + 1)))
                   if u.type.value == 'reflection']
    assert reflections and reflections[0].text == 'The robot keeps working in the kitchen.'
    evidence = mem.store_db.edges_of([reflections[0].id], fanout=50)[reflections[0].id]
    assert {e.dst for e in evidence if e.kind is EdgeKind.EVIDENCE} == {a.id, b.id}


def test_deterministic_reflection_after_threshold(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    for i in range(40):
        mem.store(f'I checked the fridge temperature, reading {i}', importance=5.0)
    # 150 / 5 = 30 units pass the threshold once: one reflection about the fridge.
    stats_units = mem.stats().units
    reflections = [u for u in mem.get(list(range(1, stats_units + 1))) if u.type.value == 'reflection']
    assert len(reflections) == 1 and 'fridge' in reflections[0].text
    evidence = mem.store_db.edges_of([reflections[0].id], fanout=100)[reflections[0].id]
    assert len([e for e in evidence if e.kind is EdgeKind.EVIDENCE]) >= 3


def test_a_store_error_on_one_unit_does_not_end_the_worker(mem_factory: Any, monkeypatch: Any) -> None:
    mem: BrainMem = mem_factory(llm_extractor=FakeLlm())
    assert mem.enrichment is not None
    real = mem.store_db.update_content
    calls = [0]

    def full_once(unit: Any) -> None:
        calls[0] += 1
        if calls[0] == 1:
            raise StoreError('cannot write to memory store: database or disk is full')
        real(unit)

    monkeypatch.setattr(mem.store_db, 'update_content', full_once)
    first = mem.store('The cat knocked the vase off the shelf.')
    assert wait_for(lambda: mem.enrichment is not None and mem.enrichment.failed == 1, timeout=20.0)
    second = mem.store('I wiped the kitchen table.')
    assert mem.enrichment.wait_idle(20.0)
    assert mem.enrichment._thread.is_alive()
    got = {u.id: u.enrichment for u in mem.get([first.id, second.id])}
    # The failed one stays pending (enriched at the next start); the next one is done.
    assert got == {first.id: Enrichment.PENDING, second.id: Enrichment.DONE}
