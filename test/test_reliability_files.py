"""Damaged and misplaced files: detected with a clear message, rebuilt where possible, never a wrong result.

The vector index is derived data: any damage (truncated, bit-flipped, deleted,
stale, or copied from another robot's data directory) must lead to a rebuild from
SQLite, after which retrieval answers exactly as before. The database is the
source of truth: a newer schema or a corrupted file must stop the store with a
message that says so (and the node process must exit non-zero rather than loop),
without touching the file.
"""
# mypy: disallow-untyped-calls=False

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reliability.checks import crash_image, index_problems, integrity, sql
from rosutil import REPO, node_env

from brainmem_ros.errors import SchemaVersionError, StoreError
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.schema import SCHEMA_VERSION

INDEX = 'vectors.faiss'
SIDECAR = 'vectors.faiss.json'
TEXTS = ['The red cup is on the kitchen table', 'The spare battery is in the garage drawer',
         'The cat sleeps on the blue sofa', 'The umbrella hangs by the front door',
         'The toolbox is under the stairs', 'The plant on the balcony needs water']
PROBE = ('where is the umbrella', 'The umbrella hangs by the front door')


def make_store(path: Path, embedder: Any, texts: list[str] = TEXTS) -> dict[int, str]:
    with BrainMem.open(path, embedder=embedder) as mem:
        return {mem.store(t).id: t for t in texts}


def top_text(mem: BrainMem, query: str) -> str:
    hits = mem.retrieve(query, top_k=3)
    known = set(mem.store_db.all_ids())
    assert {h.unit.id for h in hits} <= known
    return hits[0].unit.text


def truncate_half(d: Path) -> None:
    data = (d / INDEX).read_bytes()
    (d / INDEX).write_bytes(data[:len(data) // 2])


def truncate_empty(d: Path) -> None:
    (d / INDEX).write_bytes(b'')


def flip_bits(d: Path) -> None:
    data = bytearray((d / INDEX).read_bytes())
    for offset in random.Random(3).sample(range(len(data)), 5):
        data[offset] ^= 0x10
    (d / INDEX).write_bytes(bytes(data))


def delete_index(d: Path) -> None:
    (d / INDEX).unlink()


def delete_sidecar(d: Path) -> None:
    (d / SIDECAR).unlink()


def garbage_sidecar(d: Path) -> None:
    (d / SIDECAR).write_text('{"generation": "many", ')


def forged_sidecar(d: Path) -> None:
    # Someone "repairs" the sidecar by hand to match a damaged index file.
    truncate_half(d)
    meta = json.loads((d / SIDECAR).read_text())
    meta['sha256'] = hashlib.sha256((d / INDEX).read_bytes()).hexdigest()
    (d / SIDECAR).write_text(json.dumps(meta))


DAMAGE: dict[str, Callable[[Path], None]] = {
    'truncated': truncate_half, 'emptied': truncate_empty, 'bit-flipped': flip_bits,
    'deleted': delete_index, 'sidecar deleted': delete_sidecar, 'sidecar garbage': garbage_sidecar,
    'sidecar forged for a truncated file': forged_sidecar,
}


@pytest.mark.parametrize('damage', list(DAMAGE))
def test_damaged_index_is_rebuilt_from_sqlite(tmp_path: Path, embedder: Any, damage: str) -> None:
    data = tmp_path / 'mem'
    acked = make_store(data, embedder)
    DAMAGE[damage](data)
    with BrainMem.open(data, embedder=embedder) as mem:
        assert mem.index_status.startswith('rebuilt from the store ('), mem.index_status
        assert index_problems(mem) == []
        assert top_text(mem, PROBE[0]) == PROBE[1]
        assert {u.id: u.text for u in mem.get(list(acked))} == acked
    with BrainMem.open(data, embedder=embedder) as mem:
        assert mem.index_status == 'loaded'  # the rebuilt index was saved for next time


def test_index_copied_from_another_robot_is_not_used(tmp_path: Path, embedder: Any) -> None:
    # Same number of units and changes on both robots: counters alone would match.
    make_store(tmp_path / 'a', embedder)
    make_store(tmp_path / 'b', embedder, [f'Robot B note: {t.lower()}' for t in reversed(TEXTS)])
    for name in (INDEX, SIDECAR):
        shutil.copyfile(tmp_path / 'a' / name, tmp_path / 'b' / name)
    with BrainMem.open(tmp_path / 'b', embedder=embedder) as mem:
        assert mem.index_status.startswith('rebuilt'), mem.index_status
        assert index_problems(mem) == []
        assert top_text(mem, PROBE[0]) == 'Robot B note: the umbrella hangs by the front door'


def test_lost_wal_never_gives_a_wrong_result(tmp_path: Path, embedder: Any) -> None:
    data = tmp_path / 'mem'
    first = make_store(data, embedder, TEXTS[:3])  # checkpointed into memory.db on close
    mem = BrainMem.open(data, embedder=embedder)
    try:
        for text in TEXTS[3:]:
            mem.store(text)  # committed, still only in memory.db-wal
        mem.save_index()  # the index file now reflects the WAL's units too
        image = crash_image(data, tmp_path / 'image')
        for name in (INDEX, SIDECAR):
            shutil.copyfile(data / name, image.parent / name)
    finally:
        mem.close()
    assert (image.parent / 'memory.db-wal').stat().st_size > 0
    (image.parent / 'memory.db-wal').unlink()
    assert integrity(image) == 'ok'
    with BrainMem.open(image.parent, embedder=embedder) as lost:
        # The units of the lost WAL are gone (that is what deleting it means), but
        # the index never points at them: it is rebuilt from what the file holds.
        assert lost.index_status.startswith('rebuilt'), lost.index_status
        assert index_problems(lost) == []
        assert {u.id: u.text for u in lost.get(list(first))} == first
        assert lost.stats().units == len(first)
        hits = lost.retrieve(PROBE[0], top_k=5)
        assert PROBE[1] not in [h.unit.text for h in hits]
        # New units reuse the lost ids and the change counter climbs back to the
        # lost value: the old index file must still never be taken for current.
        for text in TEXTS[3:]:
            lost.store(f'Later: {text.lower()}')
    for name in (INDEX, SIDECAR):
        shutil.copyfile(data / name, image.parent / name)
    with BrainMem.open(image.parent, embedder=embedder) as again:
        assert again.index_status.startswith('rebuilt'), again.index_status
        assert index_problems(again) == []


def test_newer_schema_version_is_refused_untouched(tmp_path: Path, embedder: Any) -> None:
    data = tmp_path / 'mem'
    acked = make_store(data, embedder)
    sql(data / 'memory.db', f'PRAGMA user_version = {SCHEMA_VERSION + 1}')
    before = (data / 'memory.db').read_bytes()
    with pytest.raises(SchemaVersionError, match=rf'schema version {SCHEMA_VERSION + 1}, newer than'):
        BrainMem.open(data, embedder=embedder)
    assert (data / 'memory.db').read_bytes() == before
    sql(data / 'memory.db', f'PRAGMA user_version = {SCHEMA_VERSION}')
    with BrainMem.open(data, embedder=embedder) as mem:
        assert {u.id: u.text for u in mem.get(list(acked))} == acked


def corrupt_garbage(db: Path) -> None:
    db.write_bytes(random.Random(1).randbytes(64 * 1024))


def corrupt_header(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[:16] = b'not sqlite at all'[:16]
    db.write_bytes(bytes(data))


def corrupt_truncated(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[:len(data) // 2])


CORRUPT: dict[str, tuple[Callable[[Path], None], str]] = {
    'garbage': (corrupt_garbage, 'not a database'),
    'header': (corrupt_header, 'not a database'),
    'truncated': (corrupt_truncated, 'malformed'),
}


@pytest.mark.parametrize('kind', list(CORRUPT))
def test_corrupted_database_is_a_clear_store_error(tmp_path: Path, embedder: Any, kind: str) -> None:
    data = tmp_path / 'mem'
    make_store(data, embedder, TEXTS * 20)
    corrupt, needle = CORRUPT[kind]
    corrupt(data / 'memory.db')
    before = (data / 'memory.db').read_bytes()
    with pytest.raises(StoreError, match=needle) as info:
        BrainMem.open(data, embedder=embedder)
    assert 'memory.db' in str(info.value)
    assert (data / 'memory.db').read_bytes() == before  # never "repaired" into an empty store


def test_corrupted_pages_give_errors_not_answers(tmp_path: Path, embedder: Any) -> None:
    # Structural damage (the b-tree page-type byte of many pages): SQLite notices it
    # and every read that touches those pages fails with a message. (Flips inside
    # row content are invisible to SQLite, which has no page checksums: see
    # docs/reliability.md.)
    data = tmp_path / 'mem'
    texts = [f'{t} (note {i})' for i in range(40) for t in TEXTS]
    make_store(data, embedder, texts)
    db = data / 'memory.db'
    raw = bytearray(db.read_bytes())
    pages = len(raw) // 4096
    for page in range(pages // 3, 2 * pages // 3):
        raw[page * 4096] = 0x00
    db.write_bytes(bytes(raw))
    try:
        mem = BrainMem.open(data, embedder=embedder)
    except StoreError as exc:
        assert 'malformed' in str(exc)
        return
    with mem:
        try:
            problems = mem.store_db.integrity_problems(quick=True)
        except StoreError as exc:
            problems = [str(exc)]
        assert problems
        for probe in TEXTS:
            try:
                hits = mem.retrieve(probe, top_k=10)
            except StoreError as exc:
                assert str(exc).startswith('memory store read failed: ')
                continue
            assert {h.unit.text for h in hits} <= set(texts)
        with pytest.raises(StoreError, match='memory store read failed: .*malformed'), \
                mem.store_db.reading() as conn:
            conn.execute('SELECT COUNT(*), SUM(LENGTH(text)) FROM units').fetchall()
            conn.execute('SELECT COUNT(*), SUM(LENGTH(vector)) FROM vectors').fetchall()


def run_node_once(data: Path, log: Path) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, '-m', 'brainmem_ros.ros.node', '--ros-args', '-p', f'data_dir:={data}']
    return subprocess.run(args, env=node_env(), cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.mark.ros
def test_node_exits_nonzero_on_newer_schema_or_garbage(tmp_path: Path, embedder: Any) -> None:
    newer = tmp_path / 'newer'
    make_store(newer, embedder, TEXTS[:2])
    sql(newer / 'memory.db', f'PRAGMA user_version = {SCHEMA_VERSION + 7}')
    garbage = tmp_path / 'garbage'
    garbage.mkdir(mode=0o700)
    corrupt_garbage(garbage / 'memory.db')
    for data, needle in [(newer, f'schema version {SCHEMA_VERSION + 7}, newer than'),
                         (garbage, 'file is not a database')]:
        result = run_node_once(data, tmp_path / 'node.log')
        output = result.stdout + result.stderr
        assert result.returncode != 0, output
        assert 'configure failed' in output and needle in output, output
    assert sql(newer / 'memory.db', 'PRAGMA user_version')[0][0] == SCHEMA_VERSION + 7


def test_missing_wal_and_shm_of_a_clean_store_are_fine(tmp_path: Path, embedder: Any) -> None:
    data = tmp_path / 'mem'
    acked = make_store(data, embedder)
    for suffix in ('-wal', '-shm'):
        Path(f'{data / "memory.db"}{suffix}').unlink(missing_ok=True)
    with BrainMem.open(data, embedder=embedder) as mem:
        assert mem.index_status == 'loaded'
        assert {u.id: u.text for u in mem.get(list(acked))} == acked
    assert not os.path.exists(data / 'memory.db-journal')
    assert sqlite3.sqlite_version_info >= (3, 22, 0)


_HOLD_OPEN = '''
import sys, time
from brainmem_ros.memory import BrainMem
mem = BrainMem.open(sys.argv[1])
mem.store('The giraffe figurine is on the top shelf.')
print('open', flush=True)
time.sleep(600)
'''


def test_one_process_at_a_time_per_data_directory(tmp_path: Path, embedder: Any) -> None:
    # Two processes on one directory each kept their own index: each missed the other's
    # memories, and the index file the last one wrote lacked the other's units for good.
    path = tmp_path / 'mem'
    first = BrainMem.open(path, embedder=embedder)
    try:
        with pytest.raises(StoreError, match=f'already open \\(process {os.getpid()}\\)'):
            BrainMem.open(path, embedder=embedder)
    finally:
        first.close()
    BrainMem.open(path, embedder=embedder).close()  # free again once closed
    other = subprocess.Popen([sys.executable, '-c', _HOLD_OPEN, str(path)], env=node_env(),
                             stdout=subprocess.PIPE, cwd=REPO)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == b'open'
        with pytest.raises(StoreError, match=f'already open \\(process {other.pid}\\)'):
            BrainMem.open(path, embedder=embedder)
        other.kill()  # a crash: the kernel drops the lock with the process
        other.wait(10)
        with BrainMem.open(path, embedder=embedder) as mem:
            assert [h.unit.text for h in mem.retrieve('giraffe figurine', top_k=1)] == [
                'The giraffe figurine is on the top shelf.']
    finally:
        if other.poll() is None:
            other.kill()
            other.wait(10)
