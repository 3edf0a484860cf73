"""Resource faults: full disk and read-only data directory.

Store must answer ``success=false`` with SQLite's reason, Retrieve must keep
working, and nothing already stored may be harmed. The tests run as root, for
whom ``chmod 0500`` stops nothing, so the faults are real file systems instead: a
tmpfs of a few megabytes filled to the last byte, and a read-only bind mount of a
populated data directory (EROFS even for root). Both skip, saying why, when
``mount`` is not permitted. A store that *becomes* read-only while the node runs
cannot be produced with mounts (Linux refuses to remount read-only while SQLite
holds the file open for writing: EBUSY), so that case switches SQLite's own
read-only guard (``PRAGMA query_only``) on the live connection: the same
SQLITE_READONLY error a read-only file gives, injected at the store boundary.
"""
# mypy: disallow-untyped-calls=False

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip('rclpy')

from brainmem_ros.msg import Observation
from brainmem_ros.srv import Forget, Reinforce, Retrieve, Stats, Store
from reliability.checks import index_problems, integrity
from reliability.dds import DdsClient
from reliability.faults import fill, free_bytes, read_only_view, tmpfs
from rosutil import call, node_process, own_domain, running_node

from brainmem_ros.errors import StoreError
from brainmem_ros.memory import BrainMem

pytestmark = pytest.mark.ros

TEXTS = ['The red cup is on the kitchen table', 'The spare battery is in the garage drawer',
         'The cat sleeps on the blue sofa', 'The umbrella hangs by the front door',
         'The toolbox is under the stairs', 'The plant on the balcony needs water']


def store_req(text: str) -> Store.Request:
    return Store.Request(observation=Observation(text=text, source='resource-test'))


def assert_intact(data: Path, acked: dict[int, str], embedder: Any) -> None:
    assert integrity(data / 'memory.db') == 'ok'
    with BrainMem.open(data, embedder=embedder) as mem:
        assert {u.id: u.text for u in mem.get(list(acked))} == acked
        assert index_problems(mem) == []


def test_full_disk(tmp_path: Path, embedder: Any) -> None:
    with tmpfs(tmp_path / 'disk', size='8m') as disk:
        data = disk / 'mem'
        acked: dict[int, str] = {}
        with running_node(data) as (_, client):
            for text in TEXTS:
                resp = call(client, Store, 'store', store_req(text))
                assert resp.success, resp.message
                acked[resp.id] = text
            filler = fill(disk)
            assert free_bytes(disk) < 4096
            failures: list[str] = []
            # The WAL may still have room it already owns, so a few stores can
            # succeed on a full disk; they must then be kept like any other.
            for i in range(300):
                text = f'Note {i}: the hallway light {i} flickered at {i * 3} past'
                resp = call(client, Store, 'store', store_req(text))
                if resp.success:
                    acked[resp.id] = text
                    continue
                failures.append(resp.message)
                if len(failures) >= 3:
                    break
            assert failures, 'no Store failed on a full disk'
            assert all('disk is full' in m and 'internal error' not in m for m in failures), failures

            hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='where is the umbrella'))
            assert hits.success, hits.message
            assert hits.memories[0].unit.text == 'The umbrella hangs by the front door'
            stats = call(client, Stats, 'stats', Stats.Request())
            assert stats.success and stats.units >= len(acked)
            resp = call(client, Reinforce, 'reinforce', Reinforce.Request(ids=[1], reward=0.5))
            assert resp.success or 'disk is full' in resp.message, resp.message

            filler.unlink()  # space comes back: the node recovers without a restart
            resp = call(client, Store, 'store', store_req('The disk has room again'))
            assert resp.success, resp.message
            acked[resp.id] = 'The disk has room again'
        assert_intact(data, acked, embedder)


def test_read_only_data_directory(tmp_path: Path, embedder: Any) -> None:
    data = tmp_path / 'mem'
    with BrainMem.open(data, embedder=embedder) as mem:
        acked = {mem.store(t).id: t for t in TEXTS}
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    with read_only_view(data, tmp_path / 'ro') as view:
        log = tmp_path / 'node.log'
        domain = own_domain()  # a node process late in the run (rosutil.own_domain)
        with node_process(['--ros-args', '-p', f'data_dir:={view}'], log=log, domain=domain) as proc, \
                DdsClient('ro_client', domain=domain) as client:
            def alive() -> bool:
                return proc.poll() is None

            client.wait_for_service(Store, 'store', alive=alive)
            client.handshake(Stats, 'stats', Stats.Request(), alive=alive)
            resp = client.call(Store, 'store', store_req('The kettle is on the stove'), alive=alive)
            assert not resp.success
            assert 'not writable' in resp.message and 'internal error' not in resp.message, resp.message
            hits = client.call(Retrieve, 'retrieve', Retrieve.Request(query='where is the umbrella'),
                               alive=alive)
            assert hits.success, hits.message
            assert hits.memories[0].unit.text == 'The umbrella hangs by the front door'
            stats = client.call(Stats, 'stats', Stats.Request(), alive=alive)
            assert stats.success and stats.units == len(acked)
            resp = client.call(Forget, 'forget', Forget.Request(ids=[1], mode='marginalize'), alive=alive)
            assert not resp.success and 'not writable' in resp.message, resp.message
            assert alive()
        assert proc.returncode == 0, log.read_text()[-3000:]  # a clean shutdown, nothing to save
        assert 'opened read-only' in log.read_text() and 'Traceback' not in log.read_text()
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before
    assert_intact(data, acked, embedder)


def test_read_only_directory_with_a_pending_wal(tmp_path: Path, embedder: Any) -> None:
    # A robot that crashed (kill -9 leaves -wal and -shm behind), then came back
    # with its disk mounted read-only: the commits still in the WAL must be visible,
    # not skipped. Without the -shm file SQLite cannot read the WAL there: a clear
    # error then, never a store that silently lacks those commits.
    from brainmem_ros.memory.store import SqliteStore

    data = tmp_path / 'mem'
    mem = BrainMem.open(data, embedder=embedder)
    acked = {mem.store(t).id: t for t in TEXTS}
    image = tmp_path / 'image'
    image.mkdir(mode=0o700)
    for name in ('memory.db', 'memory.db-wal', 'memory.db-shm'):
        shutil.copyfile(data / name, image / name)
    mem.close()
    assert (image / 'memory.db-wal').stat().st_size > 0
    with read_only_view(image, tmp_path / 'ro') as view:
        store = SqliteStore(view / 'memory.db')
        try:
            assert store.read_only
            assert {u.id: u.text for u in store.get_units(acked).values()} == acked
            with pytest.raises(StoreError, match='not writable'):
                store.set_meta('x', 'y')
        finally:
            store.close()
    (image / 'memory.db-shm').unlink()
    with read_only_view(image, tmp_path / 'ro') as view, \
            pytest.raises(StoreError, match='-wal holds commits .* mount it writable once'):
        SqliteStore(view / 'memory.db')
    store = SqliteStore(image / 'memory.db')  # writable again: everything is there
    try:
        assert {u.id: u.text for u in store.get_units(acked).values()} == acked
    finally:
        store.close()


def test_brainmem_closes_cleanly_on_a_read_only_directory(tmp_path: Path, embedder: Any) -> None:
    data = tmp_path / 'mem'
    with BrainMem.open(data, embedder=embedder) as mem:
        mem.store(TEXTS[0])
    with read_only_view(data, tmp_path / 'ro') as view:
        mem = BrainMem.open(view, embedder=embedder)
        assert mem.retrieve('red cup')[0].unit.text == TEXTS[0]
        mem.close()


def test_brainmem_opens_read_only_directory_with_a_stale_index(tmp_path: Path, embedder: Any) -> None:
    data = tmp_path / 'mem'
    with BrainMem.open(data, embedder=embedder) as mem:
        mem.store(TEXTS[0])
    (data / 'vectors.faiss').unlink()
    with read_only_view(data, tmp_path / 'ro') as view:
        try:
            mem = BrainMem.open(view, embedder=embedder)
        except OSError as exc:
            pytest.fail(f'open raised {exc!r}')
        assert mem.index_status.startswith('rebuilt')
        assert mem.retrieve('red cup')[0].unit.text == TEXTS[0]


def test_store_turning_read_only_while_running(tmp_path: Path, embedder: Any) -> None:
    data = tmp_path / 'mem'
    acked: dict[int, str] = {}
    with running_node(data) as (node, client):
        for text in TEXTS[:3]:
            resp = call(client, Store, 'store', store_req(text))
            acked[resp.id] = text
        db = node.mem.store_db
        with db.atomic():
            pass  # no transaction left open
        db._db.execute('PRAGMA query_only = ON')
        try:
            resp = call(client, Store, 'store', store_req(TEXTS[3]))
            assert not resp.success and 'readonly' in resp.message, resp.message
            assert 'internal error' not in resp.message
            hits = call(client, Retrieve, 'retrieve', Retrieve.Request(query='the cat on the sofa'))
            assert hits.success and hits.memories[0].unit.text == TEXTS[2], hits.message
            stats = call(client, Stats, 'stats', Stats.Request())
            assert stats.success and stats.units == 3
        finally:
            db._db.execute('PRAGMA query_only = OFF')
        resp = call(client, Store, 'store', store_req(TEXTS[3]))
        assert resp.success, resp.message
        acked[resp.id] = TEXTS[3]
    assert_intact(data, acked, embedder)


def test_mount_is_really_enforced_for_root(tmp_path: Path) -> None:
    # Guards the premise of the tests above: root can write into a chmod 0500
    # directory, but not into a read-only mount.
    src = tmp_path / 'src'
    src.mkdir(mode=0o500)
    with read_only_view(src, tmp_path / 'ro') as view:
        result = subprocess.run(['touch', str(view / 'x')], capture_output=True, text=True, check=False)
        assert result.returncode != 0 and 'Read-only file system' in result.stderr
