"""The memory core on the real encoder, real SQLite and FAISS files."""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from dbfile import evidence_types, file_rows

from brainmem_ros.errors import InvalidInputError, StoreError, UnknownIdError
from brainmem_ros.memory import BrainMem, EdgeKind, Entity, MemoryConfig, Pose, UnitType
from brainmem_ros.memory.fact_rank import fact_factors
from brainmem_ros.memory.types import Outcome

T0 = 1_760_000_000.0  # a fixed clock: the suite is deterministic


def test_store_extracts_links_and_persists(mem_factory: Any, tmp_path: Path) -> None:
    mem: BrainMem = mem_factory(clock=lambda: T0 + 100)
    a = mem.store('I opened the fridge to get the milk', stamp=T0, episode_id='e1')
    b = mem.store('The milk carton in the fridge is almost empty', stamp=T0 + 6, episode_id='e1')
    assert {'fridge', 'milk'} <= {e.key for e in a.entities}
    edges = mem.store_db.edges_of([b.id], fanout=20)[b.id]
    kinds = {(e.kind, e.dst) for e in edges}
    assert (EdgeKind.TEMPORAL, a.id) in kinds and (EdgeKind.ENTITY, a.id) in kinds
    mem.close()
    # Files are private to the robot's user.
    assert stat.S_IMODE(os.stat(tmp_path / 'mem').st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / 'mem' / 'memory.db').st_mode) == 0o600
    again: BrainMem = mem_factory(clock=lambda: T0 + 100)
    assert again.index_status == 'loaded'
    assert [u.text for u in again.get([a.id, b.id])] == [a.text, b.text]


def test_index_rebuilt_when_file_damaged(mem_factory: Any, tmp_path: Path) -> None:
    mem: BrainMem = mem_factory()
    unit = mem.store('The red cup is on the kitchen table')
    mem.close()
    index_file = tmp_path / 'mem' / 'vectors.faiss'
    data = bytearray(index_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    index_file.write_bytes(bytes(data))
    again: BrainMem = mem_factory()
    assert 'damaged' in again.index_status
    assert again.retrieve('where is the red cup', top_k=1)[0].unit.id == unit.id


def test_bad_inputs_name_the_problem(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    for text, needle in [('', 'empty'), ('x' * 5000, 'bytes'), ('bad \ud800 text', 'UTF-8'),
                         ('nul\x00byte', 'NUL')]:
        with pytest.raises(InvalidInputError, match=needle):
            mem.store(text)
    with pytest.raises(InvalidInputError, match='pose.x'):
        mem.store('at the door', pose=Pose(math.nan, 0.0))
    with pytest.raises(InvalidInputError, match='importance'):
        mem.store('at the door', importance=42)
    with pytest.raises(InvalidInputError, match='memory type'):
        mem.store('at the door', type='dream')
    unit = mem.store('at the door')
    with pytest.raises(InvalidInputError, match='top_k'):
        mem.retrieve('door', top_k=-1)
    with pytest.raises(InvalidInputError, match='reversed'):
        mem.retrieve('door', since=T0 + 10, until=T0)
    with pytest.raises(UnknownIdError, match='99'):
        mem.reinforce([unit.id, 99], reward=1.0)
    with pytest.raises(InvalidInputError, match='reward'):
        mem.reinforce([unit.id], reward=math.inf)
    with pytest.raises(InvalidInputError, match='confirm'):
        mem.forget([unit.id], mode='delete')
    assert mem.stats().units == 1 and mem.get([unit.id])[0].strength == 1.0


def test_the_api_refuses_what_the_services_refuse(mem_factory: Any) -> None:
    """The Python API checks what the Store and Retrieve services check, with the field named."""
    now = T0 + 100
    mem: BrainMem = mem_factory(clock=lambda: now)
    # A stamp years ahead would keep the facts it states "current" over every later one.
    for stamp, needle in [(1e15, 'ahead of the memory'), (now + 2 * 86400, 'ahead of the memory'),
                          (-100.0, 'before 1970')]:
        with pytest.raises(InvalidInputError, match=needle):
            mem.store('The silver widget is on the workbench', stamp=stamp)
    for pose, needle in [(Pose(1e12, 0.0), 'pose.x'), (Pose(1.0, 2.0, qw=0.0), 'zero quaternion')]:
        with pytest.raises(InvalidInputError, match=needle):
            mem.store('at the door', pose=pose)
    with pytest.raises(InvalidInputError, match='pose.x'):
        mem.store('at the door', pose=Pose('a', 0.0))  # type: ignore[arg-type]
    cases: list[tuple[list[str | Entity], str]] = [(['mug'] * 100, '100 entities'),
                                                   ([Entity('')], 'entity is empty'),
                                                   ([Entity('x' * 10000)], 'bytes')]
    for entities, needle in cases:
        with pytest.raises(InvalidInputError, match=needle):
            mem.store('a mug', entities=entities)
    with pytest.raises(InvalidInputError, match='importance'):
        mem.store('at the door', importance='5')  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match='radius'):
        mem.retrieve('door', near=Pose(0.0, 0.0), radius='3')  # type: ignore[arg-type]
    assert mem.stats().units == 0
    # A lone name is one entity (not its letters), a lone type one type.
    unit = mem.store('I saw it on the shelf', entities='mug', stamp=now + 30)  # type: ignore[arg-type]
    assert 'mug' in {e.key for e in unit.entities} and 'm' not in {e.key for e in unit.entities}
    assert [r.unit.id for r in mem.retrieve('shelf', types='observation')] == [unit.id]  # type: ignore[arg-type]


def test_reinforce_strengthens_and_links_co_used(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    a = mem.store('I stood on the chair to reach the book')
    b = mem.store('The user thanked me for the book')
    up = mem.reinforce([a.id, b.id], reward=1.0)
    assert all(u.strength > 1.0 and u.valence > 0 for u in up)
    edges = mem.store_db.edges_of([a.id], fanout=20)[a.id]
    assert any(e.kind is EdgeKind.CO_USE and b.id in (e.src, e.dst) for e in edges)
    down = mem.reinforce([a.id], reward=-1.0)[0]
    assert down.strength < up[0].strength and down.valence < up[0].valence


def test_consolidation_marginalizes_but_never_loses(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory(clock=lambda: T0)
    core = mem.store('How to open doors: push the handle down, then pull', stamp=T0)
    mem.protect([core.id])
    peers = [mem.store(text, stamp=T0 + i) for i, text in enumerate(
        ['The hallway light flickered', 'The garage door squeaked', 'The bathroom tap dripped'])]
    for day in range(1, 1001):
        mem.consolidate(now=T0 + day * 86400.0)
    stats = mem.stats()
    assert stats.marginalized_units == 3 and stats.units == 4
    kept = mem.get([core.id])[0]
    assert kept.strength == pytest.approx(1.0) and not kept.marginalized
    hits = mem.retrieve('hallway light flickered', top_k=5)
    assert {h.unit.id for h in hits}.isdisjoint({p.id for p in peers})
    hits = mem.retrieve('hallway light flickered', top_k=5, include_marginalized=True)
    assert hits[0].unit.id == peers[0].id
    assert mem.forget([peers[0].id], mode='restore') == [peers[0].id]
    assert peers[0].id in {h.unit.id for h in mem.retrieve('hallway light flickered', top_k=5)}
    # A restore lasts: the next cycle does not marginalize the memory again at once.
    mem.consolidate(now=T0 + 1001 * 86400.0)
    assert not mem.get([peers[0].id])[0].marginalized


def test_a_marginalized_memory_comes_back_only_by_association(mem_factory: Any) -> None:
    """Reached through the graph, a marginalized memory counts for what its links pass on,
    not for its own match: the best match it was before it no longer comes first."""
    mem: BrainMem = mem_factory(clock=lambda: T0)
    texts = ['The red mug is on the kitchen counter.', 'I watered the fern in the living room.',
             'The garage door was left open.', 'The user asked for coffee at 7am.',
             'The keys are in the blue bowl by the door.', 'The cat sleeps on the sofa.']
    ids = [mem.store(t, stamp=T0 - 60 * (len(texts) - i), episode_id='e1').id for i, t in enumerate(texts)]
    assert mem.retrieve('fern watering', top_k=3)[0].unit.id == ids[1]
    mem.forget([ids[1]], mode='marginalize')
    hits = mem.retrieve('fern watering', top_k=len(texts))
    assert hits[0].unit.id != ids[1]
    for hit in hits:
        if hit.unit.id == ids[1]:  # if its links reach it, by them alone
            assert hit.parts.vector == 0.0 and len(hit.path) > 1
    assert mem.retrieve('fern watering', top_k=3, include_marginalized=True)[0].unit.id == ids[1]


def test_near_duplicates_fold_into_one_unit(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    first = mem.store_ex('The TV remote is on the sofa', stamp=T0, episode_id='e', pose=Pose(1, 1))
    again = mem.store_ex('The TV remote is on the sofa.', stamp=T0 + 5, episode_id='e', pose=Pose(1.1, 1))
    assert first.created and not again.created and again.unit.id == first.unit.id
    assert again.unit.repeats == 1 and mem.stats().units == 1
    later = mem.store_ex('The TV remote is on the sofa', stamp=T0 + 3600, episode_id='e', pose=Pose(1, 1))
    assert later.created


def test_a_speaker_repeating_words_after_another_turn_is_a_new_turn(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    mem.store('Ben: Did you lock the shed?', stamp=T0, episode_id='talk')
    yes = mem.store_ex('Ana: Yes.', stamp=T0 + 5, episode_id='talk')
    again = mem.store_ex('Ana: Yes.', stamp=T0 + 6, episode_id='talk')  # nothing said between: folded
    assert not again.created and again.unit.id == yes.unit.id
    mem.store('Ben: Is the gate open?', stamp=T0 + 10, episode_id='talk')
    answer = mem.store_ex('Ana: Yes.', stamp=T0 + 15, episode_id='talk')  # answers another question
    assert answer.created and answer.unit.id != yes.unit.id
    assert [f.value for f in mem.state_of('gate')] == ['open']
    # A caption seen again after another folds as before: the camera sees the same scene.
    mem.store('a cup on the kitchen table', stamp=T0 + 20, episode_id='cam')
    mem.store('a cat on the sofa', stamp=T0 + 21, episode_id='cam')
    assert not mem.store_ex('a cup on the kitchen table', stamp=T0 + 22, episode_id='cam').created


def test_filters(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    k = mem.store('The kettle is on the kitchen counter', stamp=T0, episode_id='a', pose=Pose(1, 1))
    mem.store('The kettle is boiling water now', stamp=T0 + 100, episode_id='b', pose=Pose(9, 9),
              type='outcome')

    def ids(hits: list[Any]) -> list[int]:
        return [h.unit.id for h in hits]

    assert ids(mem.retrieve('kettle', episode_id='a')) == [k.id]
    assert ids(mem.retrieve('kettle', until=T0 + 10)) == [k.id]
    assert ids(mem.retrieve('kettle', near=Pose(1.5, 1), radius=1.0)) == [k.id]
    assert ids(mem.retrieve('kettle', near=Pose(1.5, 1, frame='odom'), radius=1.0)) == []
    assert k.id not in ids(mem.retrieve('kettle', types=[UnitType.OUTCOME]))


def test_runtime_config_validation() -> None:
    from brainmem_ros.errors import ConfigError

    with pytest.raises(ConfigError, match='retrieval.hops'):
        MemoryConfig.from_mapping({'retrieval.hops': 9})
    with pytest.raises(ConfigError, match='unknown memory option'):
        MemoryConfig.from_mapping({'retrieval.nope': 1})
    assert MemoryConfig.from_mapping({'retrieval.w_act': 1}).retrieval.w_act == 1.0


def test_new_state_supersedes_old_and_as_of_answers_then(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory(clock=lambda: T0 + 10_000)
    old = mem.store('The red cup is on the kitchen table.', stamp=T0)
    new = mem.store('I moved the red cup to the sink.', stamp=T0 + 7200)
    assert old.state_changes and new.state_changes
    # The observation stays valid; the fact it stated is what the newer one closed.
    assert mem.get([old.id])[0].valid_until is None and new.valid_until is None
    assert [(f.value, f.valid_until) for f in mem.state_of('red cup', attribute='location')] == [
        ('sink', None), ('kitchen table', T0 + 7200)]
    edges = mem.store_db.edges_of([new.id], fanout=20)[new.id]
    assert any(e.kind is EdgeKind.SUPERSEDES and (e.src, e.dst) == (new.id, old.id) for e in edges)
    assert [h.unit.id for h in mem.retrieve('where is the red cup?', top_k=1, as_of=T0 + 3600)] == [old.id]
    # What the ranking multiplies in for "now": the current value's evidence up, the old one's down.
    factors = fact_factors(mem.facts, [old.id, new.id], ['red cup'])
    assert factors[new.id] > 1.0 > factors[old.id]
    assert mem.retrieve('where is the red cup?', top_k=1)[0].unit.id == new.id
    assert mem.stats().units == 2  # nothing deleted


def test_consolidation_replays_connected_mid_strength_units(mem_factory: Any) -> None:
    config = MemoryConfig.from_mapping({'dynamics.replay_count': 1})
    mem: BrainMem = mem_factory(config=config)
    mem.store('The kitchen table is where the user eats', stamp=T0, episode_id='e')
    for i, text in enumerate(['I set the kitchen table', 'I wiped the kitchen table',
                              'The user put a vase on the kitchen table']):
        mem.store(text, stamp=T0 + 10 * (i + 1), episode_id='e')
    report = mem.consolidate(now=T0 + 30 * 86400)
    assert len(report.replayed) == 1
    replayed = mem.get(list(report.replayed))[0]
    others = [u for u in mem.get([1, 2, 3, 4]) if u.id != replayed.id]
    assert all(replayed.strength > u.strength for u in others)


def test_truncated_database_is_refused_not_recreated(mem_factory: Any, tmp_path: Path) -> None:
    from brainmem_ros.errors import StoreError

    mem: BrainMem = mem_factory()
    mem.store('The red cup is on the kitchen table')
    mem.close()
    db = tmp_path / 'mem' / 'memory.db'
    for suffix in ('-wal', '-shm'):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b'')
    with pytest.raises(StoreError, match='empty but vectors.faiss holds 1 vectors'):
        BrainMem.open(tmp_path / 'mem', embedder=mem.embedder)
    assert (tmp_path / 'mem' / 'vectors.faiss').exists() and db.stat().st_size == 0


def test_reflection_creates_insights_linked_to_their_evidence(mem_factory: Any) -> None:
    mem = mem_factory()
    for i in range(30):
        mem.store(f'The dishwasher in the kitchen failed to start on attempt {i}.', stamp=1_000.0 + 60 * i,
                  episode_id='dishes', importance=8.0)
    reflections = file_rows(mem.store_db.path,
                            "SELECT id, text FROM units WHERE type = 'reflection' ORDER BY id")
    assert reflections, 'no reflection after 240 points of importance (threshold 150)'
    assert any('dishwasher' in text for _, text in reflections)
    for uid, _ in reflections:
        evidence = evidence_types(mem.store_db.path, uid)
        assert evidence and all(t == 'observation' for t in evidence)
    hits = mem.retrieve('what keeps going wrong with the dishwasher?', types=['reflection'])
    assert hits and all(h.unit.type is UnitType.REFLECTION for h in hits)


def test_a_reflection_on_what_went_well_is_no_failure(mem_factory: Any) -> None:
    """The summary's tallies ("0 failed") are not an outcome: an insight drawn from what went
    well is not stored as a failure (all of them were, with valence -0.6)."""
    mem = mem_factory()
    for i in range(4):
        mem.store(f'I put the blue key in the bowl by the door, trip {i}.', stamp=1_000.0 + 60 * i,
                  episode_id='keys', valence=0.5)
    insights = mem.reflect(force=True)
    assert insights, 'no insight from four memories of the key'
    for unit in insights:
        assert 'failed' in unit.text and unit.outcome is not Outcome.FAILURE
        assert unit.valence == pytest.approx(0.5)


def test_encoder_failure_during_retrieve_is_the_error_reported(mem_factory: Any, embedder: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The query's encoder error surfaces as itself, not as what the words' thread met."""
    from brainmem_ros.errors import ModelError, StoreError
    from brainmem_ros.memory import retrieval

    mem: BrainMem = mem_factory(clock=lambda: T0 + 100)
    mem.store('The red cup is on the kitchen table', stamp=T0)

    def broken_text(*_: object) -> object:
        raise StoreError('database is locked')

    class BrokenEncoder:
        dim = embedder.dim

        def embed(self, texts: object) -> object:
            raise ModelError('ONNX Runtime: out of memory')

    with monkeypatch.context() as patch:
        patch.setattr(retrieval, 'text_candidates', broken_text)
        patch.setattr(mem.retriever, 'embedder', BrokenEncoder())
        with pytest.raises(ModelError, match='out of memory'):
            mem.retrieve('where is the red cup?')
    # Nothing was left half done: the next query answers.
    assert [h.unit.text for h in mem.retrieve('where is the red cup?', top_k=1)] == [
        'The red cup is on the kitchen table']


def test_the_vector_search_runs_while_the_words_are_still_searched(mem_factory: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Recall waits for the words' thread only after the vector search: at 100k units the
    words take longer than the encoder, and the two searches overlap (Retrieve p50 -1.3 ms
    there). Here the words' search cannot end before the vector search has begun; asked in
    the other order, the words' thread gives up and the query fails."""
    import threading

    from brainmem_ros.memory import retrieval
    from brainmem_ros.memory.text_recall import text_candidates as shipped_text

    mem: BrainMem = mem_factory(clock=lambda: T0 + 100)
    mem.store('The red cup is on the kitchen table', stamp=T0)
    searched = threading.Event()
    index = mem.retriever.index
    shipped_search = index.search

    def text_after_search(*args: Any) -> Any:
        if not searched.wait(10.0):
            msg = 'the vector search waited for the words'
            raise AssertionError(msg)
        return shipped_text(*args)

    def search(*args: Any, **kwargs: Any) -> Any:
        searched.set()
        return shipped_search(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(retrieval, 'text_candidates', text_after_search)
        patch.setattr(index, 'search', search)
        hits = mem.retrieve('where is the red cup?', top_k=1)
    assert searched.is_set()
    assert [h.unit.text for h in hits] == ['The red cup is on the kitchen table']
    assert hits[0].parts.lexical > 0.0  # the words' evidence still counts


def test_every_call_on_a_closed_memory_is_a_store_error(mem_factory: Any) -> None:
    # Retrieve's recall threads are shut down with the memory: submitting to them raised
    # the executor's RuntimeError, which callers that handle BrainMemError let through.
    mem: BrainMem = mem_factory()
    unit = mem.store('The spare batteries are in the hallway cupboard.')
    mem.close()
    for call in (lambda: mem.retrieve('spare batteries'), lambda: mem.store('The door is open.'),
                 lambda: mem.reinforce([unit.id], reward=1.0), lambda: mem.get([unit.id]),
                 mem.consolidate):
        with pytest.raises(StoreError):
            call()
    # A cycle asked of a closed memory never began: no talk of one stopping and resuming.
    with pytest.raises(StoreError, match='^memory store is closed$'):
        mem.consolidate()
