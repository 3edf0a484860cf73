"""The fact layer on real parts: SQLite on disk, the ONNX encoder, a real extractor.

Every scenario runs in one store that already holds 540 routine observations
(other objects moved, other doors toggled, umbrella-stand chores), so a fact that
leaks between entities, or a lookup that a similar name fools, shows up here.

The scenarios run the default extractor (the spaCy parser), as a robot does: the
facts follow from the state changes it reads in each sentence. The enrichment test gives
the parser to the enrichment seam behind a fast path that finds nothing.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbfile import file_rows

from brainmem_ros.encoders.parsed import SpacyExtractor
from brainmem_ros.errors import InvalidInputError
from brainmem_ros.memory import BrainMem, Entity, Pose
from brainmem_ros.memory.fact_rank import fact_factors
from brainmem_ros.memory.fact_store import REBUILD_KEY
from brainmem_ros.memory.facts import (
    CURRENT_FACTOR,
    NAMED_FACTOR,
    STALE_FACTOR,
    Fact,
    entity_key,
    names_match,
)
from brainmem_ros.memory.schema import SCHEMA_V1
from brainmem_ros.memory.types import ObservationInput

T0 = 1_780_000_000.0
H = 3600.0
NOW = T0 + 30 * H

_OBJECTS = ('green towel', 'white plate', 'steel pot', 'wooden spoon', 'glass jar', 'paper bag',
            'cardboard box', 'black shoe', 'plastic bottle', 'tea cup', 'cutting board', 'toy car')
_PLACES = ('kitchen counter', 'dining table', 'bottom shelf', 'laundry basket', 'sink', 'desk',
           'window sill', 'bench', 'drawer', 'cupboard')
_CHORES = ('Wiped the {p}.', 'Checked the {o} near the {p}.', 'Moved the {o} to the {p}.',
           'The {o} is on the {p}.', 'Put the {o} in the {p}.', 'Picked up the {o} from the {p}.')
_ROUTINE = ('Put the umbrella stand by the front door.', 'The umbrella stand in the hallway is empty.',
            'The back door is open.', 'Closed the back door.', 'Vacuumed the hallway rug.',
            'The kitchen light is on.', 'Turned off the kitchen light.', 'Watered the plant by the window.',
            'Charged at the dock for twenty minutes.', 'Delivered the mail to the study.')


def _distractors() -> list[ObservationInput]:
    items: list[ObservationInput] = []
    combos = itertools.product(_CHORES, _OBJECTS, _PLACES)
    for i, (chore, obj, place) in enumerate(itertools.islice(combos, 480)):
        items.append(ObservationInput(chore.format(o=obj, p=place), stamp=T0 - 24 * H + i * 97.0,
                                      episode_id=f'day-{i // 100}', source='routine',
                                      pose=Pose(i % 17 * 0.7, i % 11 * 0.9) if i % 3 else None))
    for i, text in enumerate(_ROUTINE * 6):
        items.append(ObservationInput(text, stamp=T0 - 20 * H + i * 1800.0, source='routine',
                                      pose=Pose(1.0 + i % 4, 2.0)))
    return items


@pytest.fixture(scope='module')
def mem(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[BrainMem]:
    """One store with the routine distractors, shared by the scenarios (disjoint entities)."""
    memory = BrainMem.open(tmp_path_factory.mktemp('facts') / 'mem', embedder=embedder,
                           clock=lambda: NOW)
    items = _distractors()
    assert len(items) >= 500
    for start in range(0, len(items), 100):
        results = memory.store_many(items[start:start + 100])
        assert all(not isinstance(r, Exception) for r in results)
    yield memory
    memory.close()


def places(facts: list[Fact]) -> list[tuple[str, float, float | None]]:
    return [(f.value, f.valid_from, f.valid_until) for f in facts]


def test_same_value_is_no_conflict_and_both_events_stay(mem: BrainMem) -> None:
    first = mem.store('Loaded the dishwasher with the plates facing the centre.', stamp=T0)
    second = mem.store('Loaded the dishwasher with the plates stacked by size.', stamp=T0 + 2 * H)
    facts = mem.state_of('dishwasher')
    assert len(facts) == 1
    fact = facts[0]
    assert (fact.attribute, fact.value, fact.valid_from, fact.valid_until) == ('state', 'loaded', T0, None)
    assert fact.evidence == (first.id, second.id) and fact.last_seen == T0 + 2 * H
    # Observations are events: neither is invalidated, neither loses score.
    assert all(u.valid_until is None for u in mem.get([first.id, second.id]))
    # Relevance x prior: the facts' part of the score (typicality and redundancy step back
    # a near-copy of a memory scored higher, fact or not).
    hits = {h.unit.id: h.parts.relevance * h.parts.prior
            for h in mem.retrieve('loaded the dishwasher with the plates', top_k=5)}
    assert first.id in hits and second.id in hits
    assert hits[first.id] > 0.8 * hits[second.id]
    factors = fact_factors(mem.facts, [first.id, second.id], ['dishwasher'])
    assert factors[first.id] == factors[second.id] == CURRENT_FACTOR
    for _ in range(3):
        mem.reinforce([first.id], reward=1.0)
    assert mem.retrieve('loaded the dishwasher with the plates', top_k=1)[0].unit.id == first.id


def test_moved_object_now_and_as_of_each_moment(mem: BrainMem) -> None:
    t = T0 + H
    a = mem.store('The blue umbrella is leaning against the coat rack in the hallway.', stamp=t,
                  pose=Pose(1.0, 4.0))
    b = mem.store('Moved the blue umbrella from the hallway to the garage shelf.', stamp=t + 5 * H,
                  pose=Pose(12.0, 3.0))
    c = mem.store('Put the blue umbrella in the car boot.', stamp=t + 8 * H, pose=Pose(15.0, -2.0))

    def where(as_of: float | None = None) -> str:
        return mem.state_of('blue umbrella', attribute='location', as_of=as_of)[0].value

    assert where() == 'car boot'
    assert where(t + H) == 'coat rack'
    assert where(t + 6 * H) == 'garage shelf'
    assert where(t + 8 * H) == 'car boot'
    assert mem.state_of('blue umbrella', attribute='location', as_of=t - H) == []
    history = mem.state_of('blue umbrella', attribute='location')
    assert places(history) == [('car boot', t + 8 * H, None), ('garage shelf', t + 5 * H, t + 8 * H),
                               ('coat rack', t, t + 5 * H)]
    assert [f.evidence for f in history] == [(c.id,), (b.id,), (a.id,)]
    assert history[0].pose == Pose(15.0, -2.0) and history[0].frame == 'map'
    # Nothing of the three observations is invalidated; supersession edges link them.
    assert all(u.valid_until is None for u in mem.get([a.id, b.id, c.id]))
    edges = mem.store_db.edges_of([c.id], fanout=30)[c.id]
    assert any(e.kind.value == 'supersedes' and (e.src, e.dst) == (c.id, b.id) for e in edges)

    # What the ranking multiplies in: among everything recalled, the memory stating
    # the value that holds (now, or as of a moment) is the one raised.
    query = 'where is the blue umbrella?'
    for as_of, expected in ((None, c.id), (t + 6 * H, b.id), (t + H, a.id)):
        hits = mem.retrieve(query, top_k=20, as_of=as_of)
        ids = [h.unit.id for h in hits]
        assert expected in ids
        factors = fact_factors(mem.facts, ids, ['blue umbrella'], as_of=as_of)
        assert factors[expected] == CURRENT_FACTOR
        assert all(f == 1.0 for uid, f in factors.items() if uid not in (a.id, b.id, c.id))
        assert max(hits, key=lambda h: h.score * factors[h.unit.id]).unit.id == expected
        assert hits[0].unit.id == expected, (as_of, [(h.unit.id, h.unit.text, h.score) for h in hits[:3]])
    stale = fact_factors(mem.facts, [a.id, b.id, c.id], ['blue umbrella'])
    assert stale == {a.id: STALE_FACTOR, b.id: STALE_FACTOR, c.id: CURRENT_FACTOR}


def test_other_objects_with_the_same_attribute_are_untouched(mem: BrainMem) -> None:
    t = T0 + 2 * H
    mug = mem.store('The red mug is on the counter.', stamp=t)
    mem.store('The laptop bag is on the counter.', stamp=t + 60)
    mem.store('Moved the laptop bag to the desk.', stamp=t + H)
    mug_facts = mem.state_of('red mug')
    assert [(f.value, f.valid_until, f.evidence) for f in mug_facts] == [('counter', None, (mug.id,))]
    assert mem.state_of('laptop bag', attribute='location')[0].value == 'desk'
    # The umbrella stand chores never reach the blue umbrella, nor the reverse.
    assert all(names_match('umbrella', entity_key(f.entity)) for f in mem.state_of('umbrella'))
    assert not any('stand' in f.entity or f.entity == 'umbrella' for f in mem.state_of('blue umbrella'))
    # A distractor object moved a hundred times keeps its own timeline.
    towel = mem.state_of('green towel', attribute='location')
    assert towel and sum(f.current for f in towel) == 1
    assert all(f.valid_until is None or f.valid_until > f.valid_from for f in towel)


def test_toggled_states_as_of_t(mem: BrainMem) -> None:
    t = T0 + 3 * H
    mem.store('The garage door is open.', stamp=t)
    mem.store('Closed the garage door.', stamp=t + H)
    mem.store('Opened the garage door.', stamp=t + 2 * H)
    mem.store('Closed the garage door.', stamp=t + 3 * H)

    def state(as_of: float | None = None) -> str:
        return mem.state_of('garage door', attribute='state', as_of=as_of)[0].value

    assert state() == 'closed'
    assert [state(t + m * H + 60) for m in range(4)] == ['open', 'closed', 'open', 'closed']
    assert len(mem.state_of('garage door')) == 4
    back = mem.state_of('back door', attribute='state')
    assert back and back[0].value == 'closed'  # the routine's last word on its own door


def test_the_state_seen_last_comes_first(mem: BrainMem) -> None:
    # Power and what the kettle does are two attributes, each with its own timeline: "off"
    # seen again after "boiling" is the newer news, but not before it was seen again.
    t = T0 + 40 * H
    for i, pred in enumerate(('off', 'boiling', 'off')):
        mem.store(f'state_clf v2.3 | target=toaster | pred={pred} | p=0.9{i}', stamp=t + i * H)

    def first(as_of: float | None = None) -> tuple[str, str]:
        fact = mem.state_of('toaster', as_of=as_of)[0]
        return fact.attribute, fact.value

    assert first() == ('power', 'off')
    assert first(t + 2 * H + 60) == ('power', 'off')
    assert first(t + H + 60) == ('state', 'boiling')  # "off" was seen again only later
    assert first(t + 60) == ('power', 'off')


def test_a_state_seen_with_a_setting_comes_first_unless_the_setting_is_asked(mem: BrainMem) -> None:
    t = T0 + 45 * H
    mem.store('I started the dishwasher on the quick cycle.', stamp=t)
    assert [(f.attribute, f.value) for f in mem.state_of('dishwasher')][:2] == [
        ('state', 'running'), ('setting', 'quick cycle')]
    mem.store('{"entity": "climate.study", "hvac_mode": "heat", "target_temp": 21}', stamp=t + 60)
    assert mem.state_of('study climate')[0].value == 'heat'
    assert mem.state_of('study climate setpoint')[0].value == '21'  # the last word asks for it


def test_of_names_seen_at_once_the_one_asked_comes_first(mem: BrainMem) -> None:
    mem.store("My gloves are in my coat; Sam's are on the hook.", stamp=T0 + 46 * H)
    assert mem.state_of("Sam's gloves")[0].value == 'hook'
    assert mem.state_of('gloves')[0].value == 'coat'


def test_late_observations_are_placed_in_time(mem: BrainMem) -> None:
    t = T0 + 4 * H
    desk = mem.store('The silver laptop is on the desk.', stamp=t)
    shelf = mem.store('Moved the silver laptop to the shelf.', stamp=t + 4 * H)
    late = mem.store('Put the silver laptop on the bed.', stamp=t + 2 * H)  # told afterwards
    assert places(mem.state_of('silver laptop', attribute='location')) == [
        ('shelf', t + 4 * H, None), ('bed', t + 2 * H, t + 4 * H), ('desk', t, t + 2 * H)]
    # A late confirmation of the current value extends it; it opens nothing.
    again = mem.store('The silver laptop is on the shelf.', stamp=t + 5 * H)
    older = mem.store('The silver laptop is still on the shelf.', stamp=t + 4.5 * H)
    current = mem.state_of('silver laptop', attribute='location')[0]
    assert (current.value, current.valid_from, current.valid_until) == ('shelf', t + 4 * H, None)
    assert current.evidence == (shelf.id, older.id, again.id) and current.last_seen == t + 5 * H
    assert mem.state_of('silver laptop', attribute='location', as_of=t + 3 * H)[0].evidence == (late.id,)
    assert mem.state_of('silver laptop', attribute='location', as_of=t + H)[0].evidence == (desk.id,)
    # A late observation older than everything starts the timeline.
    first = mem.store('The silver laptop is on the sofa.', stamp=t - 2 * H)
    assert mem.state_of('silver laptop', attribute='location', as_of=t - H)[0].evidence == (first.id,)


def test_repeated_events_all_stay_valid_and_recallable(mem: BrainMem) -> None:
    t = T0 + 10 * H
    ids = [mem.store(f'Delivered a parcel to room {n}.', stamp=t + i * H).id
           for i, n in enumerate((12, 14, 16))]
    assert all(u.valid_until is None for u in mem.get(ids))
    recalled = [h.unit.id for h in mem.retrieve('delivered a parcel', top_k=10)]
    assert set(ids) <= set(recalled)
    room_12 = [h.unit.id for h in mem.retrieve('did I deliver a parcel to room 12?', top_k=5)]
    assert ids[0] in room_12
    assert room_12[0] == ids[0], room_12
    # No delivery is judged out of date against another.
    factors = fact_factors(mem.facts, ids, ['parcel', 'room 12'])
    assert len(set(factors.values())) == 1 and min(factors.values()) >= 1.0


def test_a_value_the_query_names_is_raised_not_judged(mem: BrainMem) -> None:
    t = T0 + 12 * H
    bowl = mem.store('I put the car keys in the bowl.', stamp=t)
    drawer = mem.store('Moved the car keys to the drawer.', stamp=t + H)
    assert fact_factors(mem.facts, [bowl.id, drawer.id], ['car keys', 'bowl']) == {
        bowl.id: NAMED_FACTOR, drawer.id: 1.0}
    assert fact_factors(mem.facts, [bowl.id, drawer.id], ['keys']) == {
        bowl.id: STALE_FACTOR, drawer.id: CURRENT_FACTOR}
    assert fact_factors(mem.facts, [bowl.id], []) == {bowl.id: 1.0}


def test_latest_sighting_by_pose(mem: BrainMem) -> None:
    t = T0 + 14 * H

    def seen(at: float, pose: Pose) -> int:
        return mem.store('Detected an object on the floor.', stamp=at, pose=pose,
                         entities=['yellow ball']).id

    s1 = seen(t, Pose(2.0, 3.0))
    s2 = seen(t + H, Pose(2.2, 3.1))            # same place: confirms, refines the pose
    s3 = seen(t + 2 * H, Pose(7.0, 1.0, frame='map'))
    s_late = seen(t + 0.5 * H, Pose(2.1, 3.0))  # told late, same place as then
    last = mem.state_of('Yellow Balls', attribute='position')
    assert last[0].current and last[0].pose == Pose(7.0, 1.0) and last[0].frame == 'map'
    assert last[0].evidence == (s3,)
    assert last[1].evidence == (s1, s_late, s2) and last[1].pose == Pose(2.2, 3.1)
    as_of = mem.state_of('yellow ball', attribute='position', as_of=t + 1.5 * H)[0]
    assert as_of.pose == Pose(2.2, 3.1) and as_of.valid_until == t + 2 * H
    other_frame = seen(t + 3 * H, Pose(7.0, 1.0, frame='odom'))
    assert mem.state_of('yellow ball', attribute='position')[0].evidence == (other_frame,)
    assert any(f.entity == 'yellow ball' for f in mem.facts.last_positions(limit=1000))


def test_pre_extracted_entity_attributes_are_facts(mem: BrainMem) -> None:
    unit = mem.store('Checked the inventory list.', stamp=T0 + 16 * H,
                     entities=[Entity('red toolbox', attributes=(('location', 'garage'),))])
    fact = mem.state_of('red toolbox', attribute='location')[0]
    assert (fact.value, fact.source, fact.evidence) == ('garage', 'entity', (unit.id,))


def test_names_match_as_users_type_them(mem: BrainMem) -> None:
    mem.store('The green watering can is on the patio.', stamp=T0 + 17 * H)
    for typed in ('green watering can', 'The Green Watering Cans', 'watering can', 'the watering cans'):
        assert mem.state_of(typed, attribute='location')[0].value == 'patio', typed
    assert entity_key('big red cup') == entity_key('red big cup') == entity_key('The Red Big Cups')
    assert names_match('umbrella', 'blue umbrella')
    assert not names_match('umbrella', entity_key('umbrella stand'))
    assert not names_match('red cup', 'blue cup') and names_match('boxes', 'box')
    assert mem.state_of('purple giraffe') == []
    with pytest.raises(InvalidInputError):
        mem.state_of('   ')


def _downgrade_to_v1(db_path: Path, *, closed_unit: int) -> None:
    """Make a store look exactly like one written before the fact layer (schema 1)."""
    start = SCHEMA_V1.index('CREATE TABLE facts')
    old_facts = SCHEMA_V1[start:SCHEMA_V1.index('CREATE TABLE reinforcements')]
    db = sqlite3.connect(db_path)
    with db:
        db.execute('DROP TABLE facts')
        db.execute('DROP TABLE fact_claims')
        for statement in old_facts.split(';'):
            if statement.strip():
                db.execute(statement)
        db.execute("DELETE FROM meta WHERE key = 'facts_rebuild'")
        # What version 1 did to an observation whose fact was replaced.
        db.execute('UPDATE units SET valid_until = stamp + 1 WHERE id = ?', (closed_unit,))
        db.execute('PRAGMA user_version = 1')
    db.close()


def test_old_stores_are_migrated_without_loss(mem_factory: Any, tmp_path: Path) -> None:
    path = tmp_path / 'old'
    mem: BrainMem = mem_factory(path)
    first = mem.store('The blue umbrella is leaning against the coat rack in the hallway.', stamp=T0)
    mem.store('Moved the blue umbrella from the hallway to the garage shelf.', stamp=T0 + 5 * H)
    mem.store('The garage door is open.', stamp=T0 + H, pose=Pose(3.0, 1.0))
    before = {u.id: u.text for u in mem.get(list(range(1, 4)))}
    expected = [(f.attribute, f.value, f.valid_from, f.valid_until, f.evidence)
                for f in mem.state_of('blue umbrella') + mem.state_of('garage door')]
    edges = mem.stats().edges
    mem.close()
    _downgrade_to_v1(path / 'memory.db', closed_unit=first.id)

    reopened: BrainMem = mem_factory(path)
    assert reopened.store_db.get_meta(REBUILD_KEY) == ''
    assert int(file_rows(reopened.store_db.path, 'PRAGMA user_version')[0][0]) == 2
    assert {u.id: u.text for u in reopened.get(list(range(1, 4)))} == before
    assert all(u.valid_until is None for u in reopened.get(list(range(1, 4))))
    assert [(f.attribute, f.value, f.valid_from, f.valid_until, f.evidence)
            for f in reopened.state_of('blue umbrella') + reopened.state_of('garage door')] == expected
    assert reopened.stats().edges == edges and reopened.stats().units == 3
    assert reopened.state_of('garage door', attribute='position')[0].pose == Pose(3.0, 1.0)


def test_deleting_a_memory_rebuilds_what_it_stated(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory()
    mem.store('The red mug is on the counter.', stamp=T0)
    wrong = mem.store('Moved the red mug to the sink.', stamp=T0 + H)
    assert mem.state_of('red mug', attribute='location')[0].value == 'sink'
    mem.forget([wrong.id], mode='delete', confirm=True)
    assert places(mem.state_of('red mug', attribute='location')) == [('counter', T0, None)]


def test_default_extractor_feeds_the_same_facts(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory(clock=lambda: NOW)  # the default extractor (the parser)
    first = mem.store('The silver laptop is on the desk.', stamp=T0)
    moved = mem.store('Moved the silver laptop from the desk to the shelf.', stamp=T0 + 4 * H,
                      pose=Pose(3.0, 1.0))
    late = mem.store('Put the silver laptop on the bed.', stamp=T0 + 2 * H)
    mem.store('The back door is open.', stamp=T0 + H)
    assert places(mem.state_of('Silver Laptops', attribute='location')) == [
        ('shelf', T0 + 4 * H, None), ('bed', T0 + 2 * H, T0 + 4 * H), ('desk', T0, T0 + 2 * H)]
    assert mem.state_of('silver laptop', attribute='location', as_of=T0 + H)[0].evidence == (first.id,)
    assert mem.state_of('silver laptop', attribute='position')[0].pose == Pose(3.0, 1.0)
    assert mem.state_of('back door')[0].value == 'open'
    assert all(u.valid_until is None for u in mem.get([first.id, moved.id, late.id]))


def test_taken_things_and_readings_are_facts(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory(clock=lambda: NOW)
    put = mem.store('Hung the car keys on the key hook.', stamp=T0)
    took = mem.store('Took the car keys from the key hook.', stamp=T0 + H)
    # The robot took them: the robot holds them ("held" to the extractor).
    assert places(mem.state_of('car keys', attribute='location')) == [
        ('robot', T0 + H, None), ('key hook', T0, T0 + H)]
    # Taking it from the hook also says it was there until then.
    assert mem.state_of('car keys', attribute='location', as_of=T0 + 0.5 * H)[0].evidence == (
        put.id, took.id)
    assert mem.state_of('car keys', attribute='location')[0].evidence == (took.id,)
    mem.store('The thermostat is set to 22 degrees.', stamp=T0)
    mem.store('Turned the thermostat to 19 degrees.', stamp=T0 + 2 * H)
    mem.store('Fridge temperature 4 C.', stamp=T0 + H)
    assert [f.value for f in mem.state_of('thermostat', attribute='setting')] == ['19 degrees', '22 degrees']
    assert mem.state_of('thermostat', attribute='setting', as_of=T0 + H)[0].value == '22 degrees'
    assert mem.state_of('fridge', attribute='temperature')[0].value == '4 C'
    mem.store('Loaded the dishwasher.', stamp=T0)
    mem.store('Emptied the dishwasher.', stamp=T0 + H)
    mem.store('Turned off the lamp.', stamp=T0)
    assert [f.value for f in mem.state_of('dishwasher', attribute='state')] == ['empty', 'loaded']
    assert mem.state_of('lamp', attribute='power')[0].value == 'off'


def test_what_a_narrated_day_leaves_where(mem_factory: Any) -> None:
    """Pronouns, orders and questions through to the facts a planner asks for."""
    mem: BrainMem = mem_factory(clock=lambda: NOW)
    mem.store('The blue kettle is on the stove.', stamp=T0)
    mem.store('In the kitchen, I found the blue kettle still on, so I switched it off.', stamp=T0 + H)
    mem.store('Picked up the blue kettle and put it on the counter by the window.', stamp=T0 + 2 * H)
    mem.store('Please move the blue kettle to the sink.', stamp=T0 + 3 * H)   # an order: nothing moved
    mem.store('Is the blue kettle in the cupboard?', stamp=T0 + 4 * H)       # a question: nothing stated
    assert mem.state_of('blue kettle', attribute='power')[0].value == 'off'
    assert [f.value for f in mem.state_of('blue kettle', attribute='location')] == ['counter', 'stove']
    assert mem.state_of('blue kettle', attribute='location', as_of=T0 + 1.5 * H)[0].value == 'stove'


def test_any_arrival_order_gives_the_timeline_of_all_claims(tmp_path: Path) -> None:
    """Claims told in shuffled order, some taken back: the facts equal a rebuild from scratch."""
    import random

    import numpy as np

    from brainmem_ros.memory.fact_store import FactStore
    from brainmem_ros.memory.facts import claims_of, timeline
    from brainmem_ros.memory.store import SqliteStore
    from brainmem_ros.memory.types import MemoryUnit, StateChange

    rng = random.Random(7)
    store = SqliteStore(tmp_path / 'claims.db')
    facts = FactStore(store)
    units: list[MemoryUnit] = []
    for i in range(400):
        thing = rng.choice(('mug', 'box', 'lamp'))
        place = rng.choice(('desk', 'shelf', 'sink'))
        before = rng.choice(('', '', 'shelf', 'desk'))
        pose = Pose(rng.choice((0.0, 0.2, 3.0)), 1.0) if rng.random() < 0.5 else None
        stamp = T0 + rng.randrange(0, 200) * 60.0
        units.append(MemoryUnit(id=0, stamp=stamp, text=f'unit {i}', entities=(Entity(thing),),
                                state_changes=(StateChange(thing, 'location', before, place),),
                                pose=pose, last_access=stamp, valid_from=stamp))
    vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
    stored = [unit.__class__(**{**unit.__dict__, 'id': store.insert_unit(unit, vector)}) for unit in units]
    rng.shuffle(stored)
    for unit in stored:
        facts.observe(unit)
    gone = [u.id for u in stored[:40]]
    facts.forget_units(gone)
    with store.atomic() as db:
        db.executemany('DELETE FROM units WHERE id = ?', [(i,) for i in gone])
    kept = [u for u in stored if u.id not in set(gone)]
    for thing in ('mug', 'box', 'lamp'):
        for attribute in ('location', 'position'):
            expected = timeline(c for u in kept for c in claims_of(u)
                                if c.key == thing and c.attribute == attribute)
            got = sorted(facts.facts_of([thing], attribute=attribute), key=lambda f: f.valid_from)
            assert [(f.value, f.valid_from, f.valid_until, set(f.evidence)) for f in got] == [
                (f.value, f.valid_from, f.valid_until, set(f.evidence)) for f in expected], (thing, attribute)
    store.close()


class _SilentExtractor:
    """A fast path that finds nothing: every fact below comes from enrichment."""

    def extract(self, text: str, *, known_entities: Any = ()) -> Any:
        from brainmem_ros.memory.types import Extraction

        return Extraction()


def test_enrichment_adds_the_facts_it_finds(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory(extractor=_SilentExtractor(), llm_extractor=SpacyExtractor())
    first = mem.store('The garage door is open.', stamp=T0, pose=Pose(4.0, 4.0))
    second = mem.store('Closed the garage door.', stamp=T0 + H)
    assert mem.enrichment is not None and mem.enrichment.wait_idle(60.0)
    assert [(f.value, f.evidence) for f in mem.state_of('garage door', attribute='state')] == [
        ('closed', (second.id,)), ('open', (first.id,))]
    assert mem.state_of('garage door', attribute='position')[0].pose == Pose(4.0, 4.0)


def test_docstring_examples_of_the_fact_rules_run() -> None:
    import doctest

    from brainmem_ros.memory import fact_rank, facts, places

    results = [doctest.testmod(facts), doctest.testmod(places), doctest.testmod(fact_rank)]
    assert sum(r.attempted for r in results) >= 9 and not any(r.failed for r in results)


def test_facts_from_detector_and_navigation_records(mem: BrainMem) -> None:
    # Rows of fields, as perception and navigation software print them: the parse of the
    # whole line read no place and no state from any of them (brainmem_ros/encoders/log_records.py).
    t = T0 + 30 * H
    mem.store('yolo | frame=881 | thermos 0.90 | bbox [10,12,80,95] | on: hall bench', stamp=t)
    mem.store('tracker: thermos moved: hall bench -> kitchen windowsill', stamp=t + H)
    mem.store('door_cls >> pantry door: OPEN conf=0.84', stamp=t + H)
    mem.store('door_cls >> pantry door -> CLOSED (p=0.91)', stamp=t + 2 * H)
    assert places(mem.state_of('thermos', attribute='location')) == [
        ('kitchen windowsill', t + H, None), ('hall bench', t, t + H)]
    assert [(f.value, f.valid_until) for f in mem.state_of('pantry door', attribute='state')] == [
        ('closed', None), ('open', t + 2 * H)]


def test_a_speakers_own_thing_is_kept_apart(mem: BrainMem) -> None:
    # Two people each have a harmonica; each says where "my harmonica" is.
    mem.store('Rosa: My harmonica is on the piano bench.', stamp=T0)
    mem.store("Tomas: my harmonica's in the car glovebox.", stamp=T0 + H)
    mem.store('Rosa: I put my harmonica in my backpack.', stamp=T0 + 2 * H)
    mem.store('Tomas: I moved my harmonica to the hall shelf.', stamp=T0 + 3 * H)
    assert mem.state_of("Rosa's harmonica", attribute='location')[0].value == 'backpack'
    assert mem.state_of("tomas's harmonica", attribute='location')[0].value == 'hall shelf'
    assert mem.state_of("Tomas's harmonica", attribute='location', as_of=T0 + 2.5 * H)[0].value \
        == 'car glovebox'
    # Either one, by its plain name: the newest news first.
    assert mem.state_of('the harmonica', attribute='location')[0].value == 'hall shelf'


def test_a_screen_tells_of_its_device(mem: BrainMem) -> None:
    mem.store('a large monitor showing a football match', stamp=T0)
    mem.store('a black, switched-off monitor screen reflecting a window', stamp=T0 + H)
    assert [(f.attribute, f.value) for f in mem.state_of('monitor')][:1] == [('power', 'off')]
    mem.store('a cat asleep beside a monitor showing cartoons', stamp=T0 + 2 * H)
    assert [(f.attribute, f.value) for f in mem.state_of('monitor')][:1] == [('power', 'on')]


def test_a_modifier_said_otherwise_names_the_same_thing(mem: BrainMem) -> None:
    # (Two green pumps: no other word of the name tells them apart.)
    mem.store('a green bicycle pump on a garage shelf', stamp=T0)
    mem.store('a green football pump in the hall cupboard', stamp=T0 + H)
    assert mem.state_of('the green bike pump', attribute='location')[0].value == 'garage shelf'


def test_a_date_is_no_place(mem: BrainMem) -> None:
    # Neither the parse nor the parse-free fallback ("X is on Y") places a thing at a date.
    mem.store('The barbecue is on Saturday night.', stamp=T0)
    mem.store('The boiler service is on the 5th.', stamp=T0)
    assert mem.state_of('barbecue') == []
    assert mem.state_of('boiler service') == []


def test_a_speaker_with_an_accented_name_owns_their_things(mem: BrainMem) -> None:
    # The parse and the facts read the same speaker: "Lucía:" is a name, as "Rosa:" is.
    mem.store('Lucía: My mandolin is under the bed.', stamp=T0)
    mem.store('José: I left my mandolin in the van.', stamp=T0 + H)
    assert mem.state_of("Lucía's mandolin", attribute='location')[0].value == 'bed'
    assert mem.state_of("José's mandolin", attribute='location')[0].value == 'van'
    assert mem.state_of('lucía') == []  # the speaker's name is no thing with a state


def test_software_names_and_displays_file_under_the_thing(mem: BrainMem) -> None:
    # A log names the thing noun first; people say "the garage heater".
    mem.store('heater_garage: setpoint=12C mode=frost', stamp=T0)
    assert mem.state_of('garage heater', attribute='setting')[0].value == '12C'
    assert mem.state_of('the heater', attribute='setting')[0].value == '12C'
    # What its display reads is the heater's.
    mem.store('the garage heater display reads 15 degrees', stamp=T0 + H)
    assert mem.state_of('garage heater', attribute='setting')[0].value == '15 degrees'


def test_a_named_owners_thing_is_kept_apart(mem: BrainMem) -> None:
    mem.store("I put Nora's kazoo in the toy chest.", stamp=T0)
    mem.store("I put Omar's kazoo on the piano.", stamp=T0 + H)
    assert mem.state_of("Nora's kazoo", attribute='location')[0].value == 'toy chest'
    assert mem.state_of("omar's kazoo", attribute='location')[0].value == 'piano'
    # "It's" owns nothing.
    mem.store("It's ukulele time, so I put the ukulele on the sofa.", stamp=T0)
    assert mem.state_of('ukulele', attribute='location')[0].value == 'sofa'


def test_what_a_container_holds_is_where_it_is(mem: BrainMem) -> None:
    mem.store('a jar of marbles on the hallway bench', stamp=T0)
    assert mem.state_of('marbles', attribute='location')[0].value == 'hallway bench'
    assert mem.state_of('jar', attribute='location')[0].value == 'hallway bench'


def test_other_names_of_the_same_thing(mem: BrainMem) -> None:
    mem.store('an open refrigerator in a bright kitchen', stamp=T0)
    mem.store('I put the parcel on the porch bench.', stamp=T0)
    assert mem.state_of('the fridge', attribute='state')[0].value == 'open'
    assert mem.state_of('package', attribute='location')[0].value == 'porch bench'


def test_a_part_or_value_named_after_its_thing_is_the_things(mem: BrainMem) -> None:
    """"The front door lock" is locked when the front door is; "the oven temperature" is the
    oven's; asked either way, the same facts answer."""
    mem.store('2024-09-14 22:41:00 | lock.front_door | unlocked | method=keypad', stamp=T0)
    mem.store('The oven temperature is 180 degrees.', stamp=T0 + 60)
    assert mem.state_of('front door lock', attribute='state')[0].value == 'unlocked'
    assert mem.state_of('the front door', attribute='state')[0].value == 'unlocked'
    assert '180' in mem.state_of('the oven temperature')[0].value
    assert '180' in mem.state_of('oven')[0].value


def test_a_thing_named_by_the_room_it_is_in(mem: BrainMem) -> None:
    """"The cellar lantern" is the one lantern said to be in the cellar, when other lanterns
    make "the lantern" ambiguous; a room no lantern is said to be in finds none of them."""
    mem.store('The upstairs hallway lantern was on.', stamp=T0)
    mem.store('In the cellar the lantern had been left on, so I switched it off.', stamp=T0 + 60)
    assert mem.state_of('cellar lantern', attribute='power')[0].value == 'off'
    assert mem.state_of('attic lantern') == []


def test_a_climate_device_is_the_rooms_thermostat_and_heating(mem: BrainMem) -> None:
    mem.store('{"entity": "climate.bedroom", "hvac_mode": "heat", "target_temp": 19}', stamp=T0)
    mem.store('{"entity": "climate.bedroom", "hvac_mode": "off"}', stamp=T0 + 600)
    assert mem.state_of('bedroom heating', attribute='power')[0].value == 'off'
    assert mem.state_of('bedroom thermostat setpoint', attribute='setting')[0].value == '19'


def test_a_pronoun_in_the_next_turn_is_the_thing_placed_before(mem: BrainMem) -> None:
    ep = 'talk-ocarina'
    mem.store("Ines: I've put my ocarina in the desk drawer.", stamp=T0, episode_id=ep)
    mem.store("Ines: Hmm, actually, it's in my backpack, not the drawer.", stamp=T0 + 60, episode_id=ep)
    assert mem.state_of("Ines's ocarina", attribute='location')[0].value == 'backpack'
    # A question, a negation or a plan places nothing.
    mem.store('Ines: Is it in the car?', stamp=T0 + 120, episode_id=ep)
    mem.store("Ines: It's not in the hall cupboard.", stamp=T0 + 180, episode_id=ep)
    mem.store("Ines: I'll put it on the piano later.", stamp=T0 + 240, episode_id=ep)
    assert mem.state_of('ocarina', attribute='location')[0].value == 'backpack'
    # Another episode's pronoun is about something else.
    mem.store("Joe: it's on the windowsill.", stamp=T0 + 300, episode_id='talk-other')
    assert mem.state_of('ocarina', attribute='location')[0].value == 'backpack'


def test_the_last_place_a_turn_says_of_a_pronoun_is_where_the_thing_ends_up(mem: BrainMem) -> None:
    ep = 'talk-billfold'
    mem.store('Priya: Has anyone seen my billfold? It is not in my purse.', stamp=T0, episode_id=ep)
    mem.store("Priya: Got it, it was on the tumble dryer. I'm putting it in my coat pocket.", stamp=T0 + 60,
              episode_id=ep)
    assert mem.state_of('billfold', attribute='location')[0].value == 'coat pocket'


def test_the_weather_is_no_thing_a_pronoun_stands_for(mem: BrainMem) -> None:
    ep = 'chores-aspidistra'
    mem.store('I carried the aspidistra from the bedroom to the balcony.', stamp=T0, episode_id=ep)
    mem.store('Rain started, so I brought it back inside and set it on the kitchen windowsill.',
              stamp=T0 + 60, episode_id=ep)
    assert mem.state_of('aspidistra', attribute='location')[0].value == 'kitchen windowsill'
    assert mem.state_of('rain') == []


def test_a_pronoun_in_the_next_turn_answers_the_question_before_it(mem: BrainMem) -> None:
    ep = 'talk-skylight'
    mem.store('Ines: Did you close the porthole in the loft?', stamp=T0, episode_id=ep)
    mem.store("Carlos: No, it's still open. I'll do it after lunch.", stamp=T0 + 60, episode_id=ep)
    said = mem.state_of('porthole', attribute='state')
    assert [(f.value, f.source) for f in said] == [('open', 'fallback')]
    mem.store("Lina: where's the soundbar remote? It's not in the basket.", stamp=T0 + 120, episode_id=ep)
    mem.store("Tariq: Oh wait, it's under the sofa cushion.", stamp=T0 + 180, episode_id=ep)
    assert mem.state_of('soundbar remote', attribute='location')[0].value == 'sofa cushion'
    # The weather's "it" and a judgement state nothing of the thing asked about.
    mem.store('Ines: Did you check the garden hose?', stamp=T0 + 240, episode_id=ep)
    mem.store("Carlos: Yes, it's cold out there. It's fine.", stamp=T0 + 300, episode_id=ep)
    assert mem.state_of('garden hose') == []


def test_an_act_on_a_pronoun_answers_the_question_before_it(mem: BrainMem) -> None:
    ep = 'talk-iron'
    mem.store('Ben: Did you turn off the iron?', stamp=T0, episode_id=ep)
    mem.store('Ana: Yes, I turned it off.', stamp=T0 + 60, episode_id=ep)
    assert [(f.attribute, f.value, f.source) for f in mem.state_of('iron')] == [('power', 'off', 'fallback')]
    mem.store('Ben: Is the cellar hatch locked?', stamp=T0 + 120, episode_id=ep)
    assert mem.state_of('cellar hatch') == []  # a question states nothing, after a name too
    mem.store("Ana: I've locked it.", stamp=T0 + 180, episode_id=ep)
    assert [(f.value, f.source) for f in mem.state_of('cellar hatch')] == [('locked', 'fallback')]
    # "No," answers the question; an answer that names only a place places the thing asked of.
    mem.store('Ben: Is the oven still on?', stamp=T0 + 200, episode_id=ep)
    mem.store('Ana: No, I switched it off an hour ago.', stamp=T0 + 210, episode_id=ep)
    assert [(f.attribute, f.value) for f in mem.state_of('oven')][:1] == [('power', 'off')]
    mem.store('Ben: Where did you put the pinking shears?', stamp=T0 + 220, episode_id=ep)
    mem.store('Ana: Back in the top drawer.', stamp=T0 + 230, episode_id=ep)
    assert mem.state_of('pinking shears')[0].value == 'top drawer'
    mem.store('Ben: Got them, thanks.', stamp=T0 + 235, episode_id=ep)  # who took them has them
    assert mem.state_of('pinking shears')[0].value == 'ben'
    # The subject after its verb in a question is the thing asked of ("bike lights" had read
    # as a verb, "lights", the question naming no thing).
    mem.store('Ben: Where are the bike lights?', stamp=T0 + 236, episode_id=ep)
    mem.store('Ana: They are on the hook.', stamp=T0 + 237, episode_id=ep)
    assert mem.state_of('bike lights')[0].value == 'hook'
    # A bare yes answers the question just before it: the act asked about is done, the state
    # asked about holds; a no, or a yes taken back, says nothing.
    mem.store('Ben: Did you lock the garden shed?', stamp=T0 + 238, episode_id=ep)
    mem.store('Ana: Yes.', stamp=T0 + 239, episode_id=ep)
    assert [(f.value, f.source) for f in mem.state_of('garden shed')] == [('locked', 'fallback')]
    mem.store('Ben: Is the side gate open?', stamp=T0 + 239.5, episode_id=ep)
    mem.store('Ana: Yep, wide open.', stamp=T0 + 239.7, episode_id=ep)
    assert [(f.value, f.source) for f in mem.state_of('side gate')] == [('open', 'fallback')]
    mem.store('Ben: Did you switch off the porch heater?', stamp=T0 + 239.8, episode_id=ep)
    mem.store('Ana: No, not yet.', stamp=T0 + 239.9, episode_id=ep)
    assert mem.state_of('porch heater') == []
    # A plan states nothing.
    mem.store('Ben: Did you close the skylight?', stamp=T0 + 240, episode_id=ep)
    mem.store("Ana: No, I'll close it later.", stamp=T0 + 300, episode_id=ep)
    assert mem.state_of('skylight') == []


def _answered(mem: BrainMem, ep: str, t: float, question: str, answer: str, thing: str,
              attribute: str | None = None) -> list[tuple[str, str]]:
    """Store ``question`` and ``answer`` in episode ``ep``; (value, source) of ``thing``'s facts."""
    mem.store(question, stamp=t, episode_id=ep)
    mem.store(answer, stamp=t + 30, episode_id=ep)
    return [(f.value, f.source) for f in mem.state_of(thing, attribute=attribute)]


def test_a_request_is_done_when_the_answer_says_so(mem: BrainMem) -> None:
    ep = 'talk-requests'
    got = _answered(mem, ep, T0, 'Maya: Can you close the cellar door?', 'Leo: Done.', 'cellar door')
    assert got == [('closed', 'fallback')]
    # A yes to a request says it will be done, not that it is.
    asked = 'Maya: Could you lock the summerhouse?'
    assert _answered(mem, ep, T0 + 120, asked, 'Leo: Yes.', 'summerhouse') == []


def test_a_conversation_files_a_state_as_a_sentence_does(mem: BrainMem) -> None:
    # One value however it is said: "shut" is closed in a sentence ("The loft hatch is shut.")
    # and in an answer; an act done to "them" leaves its result ("washed": clean).
    ep = 'talk-chores'
    mem.store('The loft hatch is shut.', stamp=T0)
    assert mem.state_of('loft hatch')[0].value == 'closed'
    closed = [('closed', 'fallback')]
    assert _answered(mem, ep, T0 + 60, 'Ben: Did you close the coal bunker?', "Ana: Yes, I've shut it.",
                     'coal bunker') == closed
    asked = 'Ben: Is the greenhouse door shut?'
    assert _answered(mem, ep, T0 + 180, asked, 'Ana: Yes.', 'greenhouse door') == closed
    asked = 'Ben: What about the paint trays?'
    assert _answered(mem, ep, T0 + 300, asked, 'Ana: I washed them.', 'paint trays', 'state') == [
        ('clean', 'fallback')]
    assert _answered(mem, ep, T0 + 420, 'Ben: Did you wipe the worktop?', 'Ana: Yes.', 'worktop') == [
        ('clean', 'fallback')]


def test_a_pronoun_stands_for_the_thing_talked_about_turns_before(mem: BrainMem) -> None:
    ep = 'talk-tambourine'
    mem.store('Rosa: Has anyone seen my blue tambourine?', stamp=T0 + 50 * H, episode_id=ep)
    mem.store('Tom: Not me, sorry.', stamp=T0 + 50 * H + 60, episode_id=ep)  # turns that name no thing
    mem.store("Ana: No idea, I haven't looked.", stamp=T0 + 50 * H + 120, episode_id=ep)
    mem.store("Tom: Oh wait, it's on the piano bench.", stamp=T0 + 50 * H + 180, episode_id=ep)
    assert mem.state_of('tambourine', attribute='location')[0].value == 'piano bench'
    # A turn that says something of another thing is what a pronoun after it stands for.
    mem.store('Tom: The samovar is on.', stamp=T0 + 50 * H + 240, episode_id=ep)
    mem.store("Tom: It's in the kitchen.", stamp=T0 + 50 * H + 300, episode_id=ep)
    assert mem.state_of('samovar', attribute='location')[0].value == 'kitchen'
    assert mem.state_of('tambourine', attribute='location')[0].value == 'piano bench'
    # "the drawer of my nightstand" is the nightstand's drawer.
    mem.store('Tom: The spare key was on the desk.', stamp=T0 + 50 * H + 360, episode_id=ep)
    mem.store("Tom: I'm putting it in the drawer of my nightstand.", stamp=T0 + 50 * H + 420, episode_id=ep)
    assert mem.state_of('spare key', attribute='location')[0].value == 'nightstand drawer'


def test_mine_is_the_speakers_own_thing_of_the_kind_talked_about(mem: BrainMem) -> None:
    ep = 'talk-gloves'
    mem.store('Mira: My gardening gloves are on the potting bench.', stamp=T0 + 50 * H, episode_id=ep)
    mem.store('Joel: Mine are in the shed, on the hook.', stamp=T0 + 50 * H + 60, episode_id=ep)
    assert mem.state_of("Joel's gardening gloves", attribute='location')[0].value == 'shed'
    assert mem.state_of("Mira's gardening gloves", attribute='location')[0].value == 'potting bench'
    # "mine" earlier in the sentence makes the pronoun the speaker's too.
    mem.store('Joel: Has anyone seen the pruning shears?', stamp=T0 + 50 * H + 80, episode_id=ep)
    mem.store("Mira: I've taken mine with me, they're in my bag.", stamp=T0 + 50 * H + 90, episode_id=ep)
    assert [(f.entity, f.value) for f in mem.state_of('pruning shears', attribute='location')] == [
        ("mira's pruning shear", 'bag')]
    # Without a speaker, "mine" is nobody's.
    mem.store('Mine are in the car.', stamp=T0 + 50 * H + 120, episode_id=ep)
    assert 'car' not in {f.value for f in mem.state_of('gardening gloves', attribute='location')}


def test_a_name_that_says_where_its_thing_is(mem: BrainMem) -> None:
    mem.store('I switched the landing lamp off.', stamp=T0 + 20 * H)
    mem.store('The porch lantern is on.', stamp=T0 + 20 * H)
    mem.store('I switched the lamp on again.', stamp=T0 + 21 * H)  # a shorter name of the same lamp
    assert mem.state_of('the lamp on the landing', attribute='power')[0].value == 'on'


def test_contents_find_the_container_named_by_them(mem: BrainMem) -> None:
    mem.store('I moved the thyme pot from the sill to the balcony table.', stamp=T0)
    assert mem.state_of('the thyme', attribute='location')[0].value == 'balcony table'
    # Named alone later, the thing is still found in its container before that.
    mem.store('I brought the thyme back inside and set it on the kitchen windowsill.', stamp=T0 + 2 * H)
    assert mem.state_of('the thyme', attribute='location')[0].value == 'kitchen windowsill'
    assert mem.state_of('the thyme', attribute='location', as_of=T0 + H)[0].value == 'balcony table'
    # A plant named by what it is of, likewise; and the other way: what the plant is of.
    mem.store('I watered the oregano plant on the patio table.', stamp=T0)
    assert mem.state_of('the oregano', attribute='location')[0].value == 'patio table'
    mem.store('I set the rosemary on the kitchen dresser.', stamp=T0)
    assert mem.state_of('the rosemary plant', attribute='location')[0].value == 'kitchen dresser'


def test_a_container_asked_by_what_it_holds_is_the_container(mem: BrainMem) -> None:
    # "the pallet of boxes" is the pallet, though the boxes have facts of their own.
    mem.store('a pallet of cardboard boxes in aisle 3 of a warehouse, a forklift parked nearby', stamp=T0)
    mem.store('a loading dock with a pallet of boxes wrapped in plastic film', stamp=T0 + H)
    assert mem.state_of('the pallet of boxes', attribute='location')[0].value == 'loading dock'
    then = mem.state_of('the pallet of boxes', attribute='location', as_of=T0 + 0.5 * H)
    assert then[0].value == 'warehouse'
    # What a thing is for names it only when no thing is named so in full.
    mem.store('The spare keycard is on the reception counter.', stamp=T0)
    spare = mem.state_of('the spare keycard for room 305', attribute='location')
    assert spare[0].value == 'reception counter'


def test_where_the_places_are(mem: BrainMem) -> None:
    mem.store('a canvas satchel on a wicker bench on the sun porch', stamp=T0)
    assert mem.state_of('canvas satchel', attribute='location')[0].value == 'wicker bench'
    assert mem.state_of('wicker bench', attribute='location')[0].value == 'sun porch'


def test_a_door_or_lid_open_or_closed_is_its_appliance_open_or_closed(mem: BrainMem) -> None:
    mem.store('I closed the freezer door.', stamp=T0 + 50 * H)
    assert mem.state_of('freezer', attribute='state')[0].value == 'closed'
    assert mem.state_of('freezer door', attribute='state')[0].value == 'closed'
    # A room's or a building's door is not the room open or closed.
    mem.store('The pantry door is open.', stamp=T0 + 50 * H)
    assert mem.state_of('pantry', attribute='state') == []


def test_spare_batteries_are_things_not_the_robots_battery(mem: BrainMem) -> None:
    mem.store('I put the spare batteries in the top drawer of the hall cabinet.', stamp=T0 + 53 * H)
    assert 'drawer' in mem.state_of('spare batteries', attribute='location')[0].value
    mem.store('My batteries are low.', stamp=T0 + 53 * H)  # the robot's own
    assert all(f.entity != 'battery' for f in mem.state_of('battery') if f.attribute == 'state')


@pytest.mark.parametrize(('said', 'owned'), [
    # "her scarf": of the person the sentence named before it.
    (["Ilse's scarf is on the hook by the door.", "Tomas's scarf is on the hook too.",
      'Ilse took her scarf off the hook and left.'],
     [("Ilse's scarf", 'ilse'), ("Tomas's scarf", 'hook')]),
    # "your gloves": of the person the sentence addresses.
    (['Anna: My gloves are in the blue bowl by the door.', 'Ben: Mine are in the car.',
      "Anna: Ben, I grabbed your gloves from the car. I've got them."],
     [("Ben's gloves", 'anna'), ("Anna's gloves", 'blue bowl')]),
])
def test_her_and_your_things_are_the_persons_meant(mem: BrainMem, said: list[str],
                                                    owned: list[tuple[str, str]]) -> None:
    for i, text in enumerate(said):
        mem.store(text, stamp=T0 + 4 * H + 600 * i)
    for name, place in owned:
        assert mem.state_of(name, attribute='location')[0].value == place, name


def test_a_wished_place_is_no_place(mem: BrainMem) -> None:
    mem.store('Grandma said she wished the thimbles were kept in her sewing box.', stamp=T0 + 6 * H)
    assert mem.state_of('thimbles', attribute='location') == []


def test_an_air_conditioner_is_a_climate_device_and_its_mode_its_state(mem: BrainMem) -> None:
    mem.store('climate.office state=fan_only setpoint=26', stamp=T0 + 7 * H)
    assert mem.state_of('office air conditioner mode')[0].value == 'fan only'
    assert mem.state_of('office air conditioner setpoint', attribute='setting')[0].value == '26'


def test_a_things_temperature_is_its_reading_else_its_setting(mem_factory: Any) -> None:
    mem = mem_factory()
    mem.store('oven.kitchen: state=preheating target=200C', stamp=T0)
    assert mem.state_of('kitchen oven temperature')[0].value == '200C'
    assert mem.state_of('kitchen oven')[0].value == 'preheating'
    mem.store('The kitchen oven temperature is 185 degrees.', stamp=T0 + 60)
    assert mem.state_of('kitchen oven temperature')[0].value == '185 degrees'  # a reading first
