"""Fleet tier on a real PostgreSQL 16 + pgvector that this module starts itself.

Sharing policy, the outbox (idempotent replay after kill -9 during a sync, server
down then back), fleet recall merged with local recall, reinforcement across robots,
row-level security, credentials and migrations.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import psycopg.conninfo
import pytest
from dbfile import file_rows

from brainmem_ros.errors import ConfigError, InvalidInputError
from brainmem_ros.fleet.config import FleetConfig
from brainmem_ros.fleet.credentials import read_password, write_password
from brainmem_ros.fleet.errors import CredentialsError, FleetDeniedError, FleetSchemaError
from brainmem_ros.fleet.local_server import LocalPostgres, missing_reason, setup_fleet
from brainmem_ros.fleet.outbox_store import OutboxStore
from brainmem_ros.fleet.policy import share_reason
from brainmem_ros.fleet.schema import SCHEMA_VERSION, migrate, schema_version
from brainmem_ros.fleet.sync import FleetSync, client_from_config
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.fleet_recall import FleetRecall, ScopedResults
from brainmem_ros.memory.store import gate
from brainmem_ros.memory.types import MemoryUnit, ObservationInput, StateChange, UnitType

pytestmark = pytest.mark.skipif(bool(missing_reason()), reason=missing_reason() or 'server available')
REPO = Path(__file__).resolve().parent.parent
_db_names = itertools.count()


@pytest.fixture(scope='module')
def pg() -> Iterator[LocalPostgres]:
    server = LocalPostgres()
    server.start()
    yield server
    server.cleanup()


@pytest.fixture
def fleet(pg: LocalPostgres, tmp_path: Path) -> dict[str, FleetConfig]:
    """A fresh database with robots r1, r2 (fleet a) and r3 (fleet b)."""
    name = f'fleet_{os.getpid()}_{next(_db_names)}'
    configs = setup_fleet(pg, name, ['r1', 'r2'], fleet_id='a', secrets_dir=tmp_path / 'secrets',
                          dim=384, sync_period_s=0.1, retry_max_s=0.5, connect_timeout_s=1.0)
    configs |= setup_fleet(pg, name, ['r3'], fleet_id='b', secrets_dir=tmp_path / 'secrets', dim=384)
    return configs


@pytest.fixture
def robots(fleet: dict[str, FleetConfig], mem_factory: Callable[..., BrainMem], tmp_path: Path
           ) -> Iterator[Callable[..., tuple[BrainMem, FleetSync]]]:
    made: list[FleetSync] = []

    def robot(name: str, *, start: bool = False, home: str = '',
              **options: Any) -> tuple[BrainMem, FleetSync]:
        cfg = FleetConfig.from_mapping({**{k: getattr(fleet[name], k) for k in
                                           ('enabled', 'robot_id', 'dsn', 'credentials_file', 'sslmode',
                                            'sync_period_s', 'retry_max_s', 'connect_timeout_s')},
                                        **options})
        sync = FleetSync(cfg)
        mem = mem_factory(tmp_path / (home or name), on_event=sync.observe)
        sync.attach(mem, start=start)
        made.append(sync)
        return mem, sync

    yield robot
    for sync in made:
        sync.close()


# -- configuration, credentials, policy ------------------------------------------------

def test_policy_private_by_default() -> None:
    unit = MemoryUnit(id=1, stamp=0, text='the lift is out of order', importance=9,
                      state_changes=(StateChange('lift', 'state', 'working', 'broken'),))
    assert share_reason(unit, FleetConfig()) == ''
    assert share_reason(unit, FleetConfig(), explicit=True) == 'marked shared'
    assert share_reason(unit, FleetConfig(share_state_changes=True)) == 'state change'
    assert share_reason(unit, FleetConfig(share_min_importance=8)).startswith('importance')
    assert share_reason(unit, FleetConfig(share_min_importance=9.5)) == ''
    reflection = MemoryUnit(id=2, stamp=0, text='doors stick when cold', type=UnitType.REFLECTION)
    assert share_reason(reflection, FleetConfig(share_reflections=True)) == 'reflection'
    strong = MemoryUnit(id=3, stamp=0, text='x', strength=1.6, episode_id='tour')
    assert share_reason(strong, FleetConfig(share_min_strength=1.5)).startswith('strength')
    assert share_reason(strong, FleetConfig(share_episodes=('tour',))) == 'episode tour'
    assert share_reason(strong, FleetConfig(share_types=('observation',))) == 'type observation'


def test_config_refuses_secrets_in_dsn_and_bad_ids() -> None:
    with pytest.raises(ConfigError, match='password'):
        FleetConfig(enabled=True, robot_id='r1', dsn='host=x password=hunter2')
    with pytest.raises(ConfigError, match='robot_id'):
        FleetConfig(enabled=True, robot_id='R1; drop', dsn='host=x')
    with pytest.raises(ConfigError, match='sslmode'):
        FleetConfig(sslmode='maybe')
    assert FleetConfig().enabled is False


def test_credentials_file_must_be_private(tmp_path: Path) -> None:
    path = write_password(tmp_path / 'pw', 's3cret')
    assert read_password(path) == 's3cret'
    for mode in (0o640, 0o604):
        path.chmod(mode)
        with pytest.raises(CredentialsError, match='chmod 600'):
            read_password(path)
    with pytest.raises(CredentialsError, match='cannot be read'):
        read_password(tmp_path / 'missing')


def test_policy_shares_from_config_and_explicit_flag(robots: Callable[..., tuple[BrainMem, FleetSync]]
                                                     ) -> None:
    mem, sync = robots('r1', share_min_importance=8.0)
    kept = mem.store('I sat on the sofa for a while', importance=3)
    hot = mem.store('The stove in the kitchen was left on', importance=9)
    flagged = mem.store('The east door sticks when it is cold', importance=4)
    sync.share([flagged.id])
    report = sync.sync_once()
    assert report.policy_shared == 1
    client = client_from_config(sync.config)
    try:
        rows = {r[0] for r in client.execute('SELECT unit_id FROM fleet_units WHERE robot_id = %s', ('r1',))}
    finally:
        client.close()
    assert rows == {hot.id, flagged.id}
    assert kept.id not in rows
    assert sync.stats().pending == 0 and sync.stats().shared == 2


# -- fleet recall and reinforcement ----------------------------------------------------

def test_fleet_recall_merges_other_robots_with_source(robots: Callable[..., tuple[BrainMem, FleetSync]]
                                                      ) -> None:
    mem1, sync1 = robots('r1')
    mem2, sync2 = robots('r2')
    hazard = mem1.store('The lift in building B is out of order', source='camera')
    sync1.share([hazard.id])
    sync1.sync_once()
    mem2.store('I charged my battery in the dock')
    local = sync2.retrieve('is the lift in building B working?', scope='local')
    assert all(r.robot_id == '' for r in local.results)
    fleet = sync2.retrieve('is the lift in building B working?', scope='fleet')
    assert fleet.fleet_reached and fleet.note == ''
    top = fleet.results[0]
    assert (top.robot_id, top.memory.unit.id) == ('r1', hazard.id)
    assert top.memory.unit.text == hazard.text and top.memory.unit.stamp == pytest.approx(hazard.stamp)
    assert top.shared_at > 0
    # A robot never gets its own shared rows back as fleet results.
    assert all(r.robot_id != 'r1' for r in sync1.retrieve('lift building B', scope='fleet').results)


def test_fleet_words_are_weighed_by_the_robots_own_counts(
        robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    # Robot 2's memory holds "user" and "kitchen" everywhere and "cartridge" twice: a
    # fleet memory sharing only the rare word is better lexical evidence than one
    # sharing the two common ones, though the server's text rank (no IDF) says otherwise.
    mem1, sync1 = robots('r1')
    mem2, sync2 = robots('r2')
    for start in range(0, 200, 50):
        mem2.store_many([ObservationInput(f'The user walked into the kitchen (visit {i}).', stamp=1.0e9 + i)
                         for i in range(start, start + 50)])
    mem2.store('Changed the printer cartridge.')
    mem2.store('The printer cartridge is almost empty.')
    common = mem1.store('The user is in the kitchen again')
    rare = mem1.store('A new cartridge arrived today')
    sync1.share([common.id, rare.id])
    sync1.sync_once()
    answer = sync2.retrieve('the user in the kitchen needs a cartridge', scope='fleet', top_k=20)
    fleet = {r.memory.unit.id: r for r in answer.results if r.robot_id == 'r1'}
    assert set(fleet) == {common.id, rare.id}
    assert fleet[rare.id].memory.parts.lexical > 0.8
    assert fleet[common.id].memory.parts.lexical < 0.2
    assert fleet[rare.id].memory.score > fleet[common.id].memory.score


def test_supersession_reaches_the_fleet(pg: LocalPostgres, robots: Callable[..., tuple[BrainMem, FleetSync]]
                                        ) -> None:
    mem1, sync1 = robots('r1')
    _mem2, sync2 = robots('r2')
    old = mem1.store('The kitchen door is open', stamp=1_760_000_000.0)
    sync1.share([old.id])
    sync1.sync_once()
    sync2.sync_once()
    new = mem1.store('The kitchen door is closed', stamp=1_760_000_600.0)
    sync1.share([new.id])
    sync1.sync_once()  # the old unit is sent again: a later memory closed what it stated
    sync2.sync_once()
    assert mem1.store_db.superseded_at([old.id, new.id]) == {old.id: pytest.approx(new.stamp)}
    answer = sync2.retrieve('is the kitchen door open or closed?', scope='fleet')
    fleet = {r.memory.unit.id: r.memory for r in answer.results if r.robot_id == 'r1'}
    assert set(fleet) == {old.id, new.id}
    assert fleet[old.id].parts.prior < fleet[new.id].parts.prior
    assert next(iter(fleet)) == new.id  # the current one first
    # The cache a robot answers from while the server is down knows it too.
    pg.kill()
    try:
        cached = sync2.retrieve('is the kitchen door open or closed?', scope='fleet')
        assert cached.cached
        order = [r.memory.unit.id for r in cached.results if r.robot_id == 'r1']
        assert order.index(new.id) < order.index(old.id)
    finally:
        pg.start()


def test_reinforcement_propagates_to_the_owner(robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    mem1, sync1 = robots('r1')
    _mem2, sync2 = robots('r2')
    hazard = mem1.store('The lift in building B is out of order')
    sync1.share([hazard.id])
    sync1.sync_once()
    before = mem1.get([hazard.id])[0].strength
    sync2.reinforce('r1', [hazard.id], reward=1.0, note='avoided the lift')
    assert sync2.sync_once().reinforcements_sent == 1
    assert sync2.sync_once().reinforcements_sent == 0  # sent once
    assert sync1.sync_once().reinforcements_applied == 1
    after = mem1.get([hazard.id])[0].strength
    assert after > before
    assert sync1.sync_once().reinforcements_applied == 0  # applied once
    client = client_from_config(sync2.config)
    try:
        assert client.unit_strength('r1', hazard.id) == pytest.approx(after, abs=1e-5)
    finally:
        client.close()


def test_a_reward_from_the_fleet_does_not_wait_for_a_background_step(
        robots: Callable[..., tuple[BrainMem, FleetSync]], monkeypatch: pytest.MonkeyPatch) -> None:
    # A fleet reward took the memory's and the store's locks before its request: a
    # background step (consolidation, the access writer) that had its turn and waited for
    # those locks then kept the request waiting out REQUEST_WAIT_S, with the store held.
    monkeypatch.setattr(gate, 'REQUEST_WAIT_S', 60.0)  # the stall: the whole wait
    mem1, sync1 = robots('r1')
    _mem2, sync2 = robots('r2')
    hazard = mem1.store('The lift in building B is out of order')
    sync1.share([hazard.id])
    sync1.sync_once()
    sync2.reinforce('r1', [hazard.id], reward=1.0, note='avoided the lift')
    assert sync2.sync_once().reinforcements_sent == 1
    real = mem1.reinforce
    turn_taken = threading.Event()

    def step() -> None:
        with mem1.store_db.background_turn(0.0):
            turn_taken.set()
            with mem1._lock:
                pass

    def reinforce_as_a_step_starts(*args: Any, **kwargs: Any) -> Any:
        threading.Thread(target=step, daemon=True).start()
        assert turn_taken.wait(5.0)
        return real(*args, **kwargs)

    monkeypatch.setattr(mem1, 'reinforce', reinforce_as_a_step_starts)
    t0 = time.monotonic()
    assert sync1.sync_once().reinforcements_applied == 1
    assert time.monotonic() - t0 < 30.0  # not a timing: the stall took the whole minute


def test_marginalization_propagates(robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    mem1, sync1 = robots('r1')
    _mem2, sync2 = robots('r2')
    unit = mem1.store('The printer on floor two is jammed')
    sync1.share([unit.id])
    sync1.sync_once()
    assert any(r.robot_id == 'r1' for r in sync2.retrieve('printer jammed', scope='fleet').results)
    mem1.forget([unit.id], mode='marginalize')
    sync1.sync_once()
    assert not any(r.robot_id == 'r1' for r in sync2.retrieve('printer jammed', scope='fleet').results)
    mem1.forget([unit.id], mode='delete', confirm=True)
    sync1.sync_once()
    assert client_from_config(sync1.config).shared_count(robot_id='r1') == 0


# -- faults ----------------------------------------------------------------------------

def test_server_down_then_back(pg: LocalPostgres, robots: Callable[..., tuple[BrainMem, FleetSync]]
                               ) -> None:
    mem1, sync1 = robots('r1', start=True)
    first = mem1.store('The cafeteria closes at three today')
    sync1.share([first.id])
    deadline = time.monotonic() + 10
    while sync1.stats().pending and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sync1.stats().pending == 0
    pg.kill()
    try:
        t0 = time.monotonic()
        ids = [mem1.store(f'Corridor {i} has a wet floor sign').id for i in range(5)]
        sync1.share(ids)
        answer = sync1.retrieve('wet floor', scope='fleet')
        assert time.monotonic() - t0 < 5.0
        assert not answer.fleet_reached and 'local results only' in answer.note
        assert answer.results and all(r.robot_id == '' for r in answer.results)
        time.sleep(0.5)
        stats = sync1.stats()
        assert stats.pending == 5 and stats.errors >= 1 and stats.last_error
    finally:
        pg.start()
    deadline = time.monotonic() + 15
    while sync1.stats().pending and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sync1.stats().pending == 0
    assert client_from_config(sync1.config).shared_count(robot_id='r1') == 6


def _set_read_only(pg: LocalPostgres, dsn: str, on: bool) -> None:
    """Make new sessions of the fleet's database read-only (as a standby after a failover
    is) or writable again, and end the open ones so that the robots reconnect."""
    name = psycopg.conninfo.conninfo_to_dict(dsn)['dbname']
    with psycopg.connect(pg.admin_conninfo(), autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE {name} ' + ('SET default_transaction_read_only = on' if on
                                                   else 'RESET default_transaction_read_only'))
        conn.execute('SELECT pg_terminate_backend(pid) FROM pg_stat_activity '
                     'WHERE datname = %s AND pid <> pg_backend_pid()', (name,))


def test_a_read_only_server_is_an_error_the_sync_outlives(
        pg: LocalPostgres, robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    # psycopg's errors other than "unreachable" and "refused" (here ReadOnlySqlTransaction)
    # used to leave the sync thread: sharing stopped for good and Stats showed no error.
    mem1, sync1 = robots('r1', start=True)
    _set_read_only(pg, sync1.config.dsn, True)
    try:
        unit = mem1.store('The loading bay door is jammed')
        sync1.share([unit.id])
        deadline = time.monotonic() + 15
        while 'read-only' not in sync1.stats().last_error and time.monotonic() < deadline:
            time.sleep(0.1)
        stats = sync1.stats()
        assert 'read-only' in stats.last_error and stats.errors >= 1 and stats.pending == 1
    finally:
        _set_read_only(pg, sync1.config.dsn, False)
    deadline = time.monotonic() + 15
    while sync1.stats().pending and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sync1.stats().pending == 0
    assert client_from_config(sync1.config).shared_count(robot_id='r1') == 1


def test_fleet_cache_answers_while_the_server_is_down(
        pg: LocalPostgres, robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    mem1, sync1 = robots('r1')
    mem2, sync2 = robots('r2')
    hazard = mem1.store('The lift in building B is out of order', source='camera')
    sync1.share([hazard.id])
    sync1.sync_once()
    mem2.store('I charged my battery in the dock')
    report = sync2.sync_once()
    assert report.received == 1
    stats = sync2.stats()
    assert stats.cached == 1 and stats.cache_synced > 0
    assert sync2.sync_once().received == 1  # the lookback re-reads; the row is replaced, not doubled
    assert sync2.stats().cached == 1
    pg.kill()
    try:
        answer = sync2.retrieve('is the lift in building B working?', scope='fleet')
        assert not answer.fleet_reached and answer.cached
        assert 'fleet cache' in answer.note and 'last synced' in answer.note
        top = answer.results[0]
        assert top.robot_id == 'r1' and top.cached and top.memory.unit.id == hazard.id
        assert 'lift' in top.memory.unit.text and top.shared_at > 0
        assert top.memory.unit.stamp == pytest.approx(hazard.stamp)
        assert all(not r.cached for r in answer.results if r.robot_id == '')
        # robot 1 does not find its own memory in its (empty) cache
        own = sync1.retrieve('is the lift in building B working?', scope='fleet')
        assert not own.cached and all(r.robot_id == '' for r in own.results)
    finally:
        pg.start()
    deadline = time.monotonic() + 15  # the pool reconnects with its own backoff
    while not sync2.retrieve('lift', scope='fleet').fleet_reached and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sync2.retrieve('is the lift in building B working?', scope='fleet').fleet_reached


def test_fleet_caches_drop_what_its_owner_takes_back_or_deletes(
        robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    mem1, sync1 = robots('r1')
    _mem2, sync2 = robots('r2')
    lift = mem1.store('The lift in building B is out of order')
    door = mem1.store('The east door sticks in wet weather')
    nuts = mem1.store('The user in room 214 is allergic to nuts')
    sync1.share([lift.id, door.id, nuts.id])
    sync1.sync_once()
    assert sync2.sync_once().received == 3 and sync2.stats().cached == 3

    def cached() -> set[int]:
        return {r[0] for r in file_rows(sync2.mem.store_db.path, 'SELECT unit_id FROM fleet_cache')}  # type: ignore[union-attr]

    assert cached() == {lift.id, door.id, nuts.id}
    # Taken back on purpose, and deleted: both leave robot 2's cache at its next poll.
    assert sync1.unshare([lift.id]) == 1
    mem1.forget([nuts.id], mode='delete', confirm=True)
    sync1.sync_once()
    sync2.sync_once()
    assert cached() == {door.id} and sync2.stats().cached == 1
    answer = sync2.retrieve('is the lift in building B working?', scope='fleet')
    assert answer.fleet_reached
    assert all(r.memory.unit.id != lift.id for r in answer.results if r.robot_id == 'r1')
    # The policy does not share a unit taken back when it changes; an explicit share does,
    # and the old record of its unsharing does not drop it again.
    mem1.reinforce([lift.id], reward=1.0)
    sync1.sync_once()
    sync2.sync_once()
    assert lift.id not in cached()
    sync1.share([lift.id])
    sync1.sync_once()
    sync2.sync_once()
    sync2.sync_once()
    assert cached() == {door.id, lift.id}


def test_fleet_cache_is_bounded(robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    mem1, sync1 = robots('r1')
    _mem2, sync2 = robots('r2', cache_max=3, batch_size=2)
    first = [mem1.store(f'Room {i} has a broken window') for i in range(2)]
    sync1.share([u.id for u in first])
    sync1.sync_once()
    assert sync2.sync_once().received == 2
    later = [mem1.store(f'Corridor {i} is being cleaned') for i in range(4)]
    sync1.share([u.id for u in later])
    sync1.sync_once()
    sync2.sync_once()  # pages of 2 through the 4 new rows (and the lookback)
    assert sync2.stats().cached == 3
    assert sync2.cache is not None
    kept = {r[0] for r in file_rows(sync2.mem.store_db.path, 'SELECT unit_id FROM fleet_cache')}  # type: ignore[union-attr]
    assert kept == {u.id for u in later[1:]}  # the oldest sent go first
    # A robot's first poll starts at the time of the cache_max-th newest row (the
    # four later rows were sent in one transaction: one time), not at the beginning.
    _mem3, sync3 = robots('r2', home='r2_fresh', cache_max=2)
    assert 2 <= sync3.sync_once().received <= len(later) and sync3.stats().cached == 2


def test_brainmem_retrieve_scope_fleet_through_the_seam(
        pg: LocalPostgres, robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    mem1, sync1 = robots('r1')
    mem2, sync2 = robots('r2')
    assert isinstance(sync2, FleetRecall) and mem2.fleet is sync2
    hazard = mem1.store('The lift in building B is out of order', source='camera')
    sync1.share([hazard.id])
    sync1.sync_once()
    sync2.sync_once()
    mem2.store('I charged my battery in the dock')
    local = mem2.retrieve('is the lift in building B working?')
    assert not isinstance(local, ScopedResults)
    hits = mem2.retrieve('is the lift in building B working?', scope='fleet', top_k=5)
    assert isinstance(hits, ScopedResults) and hits.fleet_reached and not hits.from_cache
    first = hits.robot_ids.index('r1')
    assert hits[first].unit.text == hazard.text and hits.shared_at[first] > 0
    assert not hits.cached[first]
    pg.kill()
    try:
        offline = mem2.retrieve('is the lift in building B working?', scope='fleet')
        assert isinstance(offline, ScopedResults) and not offline.fleet_reached and offline.from_cache
        assert 'r1' in offline.robot_ids and offline.cached[offline.robot_ids.index('r1')]
    finally:
        pg.start()


def test_brainmem_scope_fleet_without_a_fleet(mem_factory: Callable[..., BrainMem], tmp_path: Path) -> None:
    mem = mem_factory(tmp_path / 'alone')
    mem.store('The east door sticks when it is cold')
    hits = mem.retrieve('does the east door stick?', scope='fleet')
    assert isinstance(hits, ScopedResults) and not hits.fleet_reached and 'local results only' in hits.note
    assert hits and hits.robot_ids == [''] * len(hits)
    with pytest.raises(InvalidInputError, match='scope'):
        mem.retrieve('door', scope='galaxy')


_CHILD = textwrap.dedent('''
    import os, signal, sqlite3, sys
    from brainmem_ros.fleet.config import FleetConfig
    from brainmem_ros.fleet.sync import FleetSync
    from brainmem_ros.memory import BrainMem
    from brainmem_ros.encoders.models import materialise_models
    from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder
    cfg = FleetConfig.from_mapping(dict(enabled=True, robot_id='r1', dsn=sys.argv[2],
                                        credentials_file=sys.argv[3], sslmode='disable', batch_size=7))
    kill_after = int(sys.argv[4])
    sent = [0]
    def after_send(batch):
        sent[0] += 1
        if sent[0] == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)  # the server committed, the outbox did not
    paths = materialise_models(include_llm=False)
    sync = FleetSync(cfg, after_send=after_send)
    mem = BrainMem.open(sys.argv[1], on_event=sync.observe,
                        embedder=OnnxEmbedder(paths.embedder_model, paths.tokenizer))
    sync.attach(mem, start=False)
    if sys.argv[5] == 'store':
        units = [mem.store(f'Shelf {i} in aisle {i % 7} holds {i} boxes of screws') for i in range(40)]
        sync.share([u.id for u in units])
        sync.reinforce('r2', [1, 2, 3], reward=0.5)
    sync.sync_once()
    print('drained', sync.stats().pending)
    db = sqlite3.connect(mem.store_db.path.resolve().as_uri() + '?mode=ro', uri=True)
    print('units', ','.join(str(r[0]) for r in db.execute(
        "SELECT id FROM units WHERE type = 'observation' ORDER BY id")))
    db.close()
''')


def test_outbox_replay_after_kill9_during_sync(fleet: dict[str, FleetConfig], tmp_path: Path,
                                               robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    _mem2, sync2 = robots('r2')
    for i in range(3):  # r2 shares units 1..3 so that r1 may reinforce them
        sync2.mem.store(f'Room {i} has a broken lamp number {i}')  # type: ignore[union-attr]
    sync2.share([1, 2, 3])
    sync2.sync_once()
    cfg = fleet['r1']
    data = tmp_path / 'killed'
    env = {**os.environ, 'PYTHONPATH': str(REPO)}
    args = [sys.executable, '-c', _CHILD, str(data), cfg.dsn, cfg.credentials_file]
    killed = subprocess.run([*args, '3', 'store'], env=env, capture_output=True, text=True, timeout=300,
                            check=False)
    assert killed.returncode == -9, killed.stderr[-2000:]
    client = client_from_config(cfg)
    try:
        assert 0 < client.shared_count(robot_id='r1') < 40  # part of it reached the server
        resumed = subprocess.run([*args, '0', 'resume'], env=env, capture_output=True, text=True,
                                 timeout=300, check=False)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        assert 'drained 0' in resumed.stdout
        rows = client.execute('SELECT unit_id, count(*) FROM fleet_units WHERE robot_id = %s '
                              'GROUP BY unit_id', ('r1',))
        units = [int(i) for i in resumed.stdout.split('units ')[1].strip().split(',')]
        assert len(units) > 30
        assert sorted(r[0] for r in rows) == units  # nothing lost
        assert all(r[1] == 1 for r in rows)  # no duplicates
        rewards = client.execute('SELECT count(*) FROM fleet_reinforcements WHERE by_robot = %s', ('r1',))
        assert rewards[0][0] == 3
    finally:
        client.close()
    assert sync2.sync_once().reinforcements_applied == 3
    assert sync2.sync_once().reinforcements_applied == 0


def test_outbox_is_bounded(robots: Callable[..., tuple[BrainMem, FleetSync]]) -> None:
    mem, sync = robots('r1', outbox_max=2)
    ids = [mem.store(f'Parcel {i} waits at the front desk').id for i in range(4)]
    assert sync.share(ids) == 2
    assert sync.stats().refused == 2 and sync.stats().pending == 2


# -- security ----------------------------------------------------------------------------

def test_rls_refuses_writing_another_robots_rows(robots: Callable[..., tuple[BrainMem, FleetSync]],
                                                 fleet: dict[str, FleetConfig]) -> None:
    mem2, sync2 = robots('r2')
    unit = mem2.store('The loading bay door is open')
    sync2.share([unit.id])
    sync2.sync_once()
    r1 = client_from_config(fleet['r1'])
    r3 = client_from_config(fleet['r3'])
    try:
        with pytest.raises(FleetDeniedError, match='row-level security'):
            r1.execute("INSERT INTO fleet_units (robot_id, unit_id, fleet_id, version, stamp, type, text, "
                       "importance, strength, valence, embedding) SELECT 'r2', 999, 'a', 1, 0, "
                       "'observation', 'forged', 5, 1, 0, embedding FROM fleet_units LIMIT 1")
        # Updates and deletes of r2's rows match nothing for r1: its policy hides them.
        assert r1.execute("UPDATE fleet_units SET text = 'forged' WHERE robot_id = 'r2' RETURNING 1") == []
        assert r1.execute("DELETE FROM fleet_units WHERE robot_id = 'r2' RETURNING 1") == []
        assert r1.shared_count(robot_id='r2') == 1  # but r1 reads r2's shared row
        assert r3.shared_count() == 0  # another fleet sees nothing
        with pytest.raises(FleetDeniedError):
            r1.execute('INSERT INTO fleet_robots VALUES (%s, %s, %s)', ('x', 'a', 'x'))
        with pytest.raises(FleetDeniedError, match='row-level security'):
            r1.execute("INSERT INTO fleet_reinforcements (fleet_id, robot_id, unit_id, by_robot, local_seq, "
                       "reward, stamp) VALUES ('a', 'r2', %s, 'r2', 1, 1, 0)", (unit.id,))
    finally:
        r1.close()
        r3.close()
    owner = client_from_config(fleet['r2'])
    try:
        assert owner.execute('SELECT text FROM fleet_units WHERE unit_id = %s', (unit.id,)) == [(unit.text,)]
    finally:
        owner.close()


def test_wrong_password_is_refused(fleet: dict[str, FleetConfig], tmp_path: Path) -> None:
    bad = write_password(tmp_path / 'bad.password', 'not-the-password')
    cfg = FleetConfig.from_mapping({'enabled': True, 'robot_id': 'r1', 'dsn': fleet['r1'].dsn,
                                    'credentials_file': str(bad), 'sslmode': 'disable',
                                    'connect_timeout_s': 1.0})
    client = client_from_config(cfg)
    try:
        with pytest.raises(Exception, match='unreachable|authentication'):
            client.shared_count()
    finally:
        client.close()


# -- migrations ----------------------------------------------------------------------------

def test_migrations_from_each_version(pg: LocalPostgres) -> None:
    name = f'migrate_{os.getpid()}'
    pg.create_database(name)
    with psycopg.connect(pg.admin_conninfo(name), autocommit=True) as conn:
        assert migrate(conn, dim=8, target=1) == 0
        assert schema_version(conn) == 1
        conn.execute("INSERT INTO fleet_robots VALUES ('r9', 'a', 'brainmem_r9')")
        conn.execute("INSERT INTO fleet_units (robot_id, unit_id, fleet_id, version, stamp, type, text, "
                     "importance, strength, valence, embedding) VALUES ('r9', 1, 'a', 1, 0, 'observation', "
                     "'kept across the upgrade', 5, 1, 0, '[1,0,0,0,0,0,0,0]')")
        assert migrate(conn, dim=8) == 1
        assert schema_version(conn) == SCHEMA_VERSION
        assert conn.execute('SELECT text FROM fleet_units').fetchone() == ('kept across the upgrade',)
        assert conn.execute("SELECT to_regclass('fleet_reinforcements') IS NOT NULL").fetchone() == (True,)
        assert migrate(conn, dim=8) == SCHEMA_VERSION  # idempotent
        with pytest.raises(FleetSchemaError, match='8-d'):
            migrate(conn, dim=384)
        conn.execute("UPDATE fleet_meta SET value = '99' WHERE key = 'schema_version'")
        with pytest.raises(FleetSchemaError, match='newer'):
            migrate(conn, dim=8)


def test_outbox_tables_are_versioned(mem_factory: Callable[..., BrainMem], tmp_path: Path) -> None:
    mem = mem_factory(tmp_path / 'solo')
    OutboxStore(mem.store_db, max_pending=10)
    assert mem.store_db.get_meta('fleet_schema_version') == '2'
    OutboxStore(mem.store_db, max_pending=10)  # reopening migrates nothing
    mem.store_db.set_meta('fleet_schema_version', '7')
    with pytest.raises(Exception, match='newer'):
        OutboxStore(mem.store_db, max_pending=10)
    mem.store_db.set_meta('fleet_schema_version', '2')
