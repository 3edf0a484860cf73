"""Access statistics are noted by Retrieve and written behind it (memory/store/access.py)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from dbfile import file_rows
from rosutil import wait_for

from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.store import access


def _access(mem: BrainMem, uid: int) -> tuple[int, float]:
    count, last = file_rows(mem.store_db.path, 'SELECT access_count, last_access FROM units WHERE id = ?',
                            (uid,))[0]
    return int(count), float(last)


def _data_version(db: sqlite3.Connection) -> int:
    return int(db.execute('PRAGMA data_version').fetchone()[0])


def test_retrieve_commits_nothing_and_its_accesses_are_written_after(mem_factory: Any,
                                                                     tmp_path: Path) -> None:
    mem: BrainMem = mem_factory(tmp_path / 'mem', clock=lambda: 5_000.0)
    unit = mem.store('The spare batteries are in the hallway cupboard.', stamp=100.0)
    mem.store_db.flush_after_s = 3600.0  # the writer waits: what the Retrieve itself wrote shows
    watcher = sqlite3.connect(mem.store_db.path)
    try:
        before = _data_version(watcher)
        hits = mem.retrieve('where are the spare batteries?')
        assert unit.id in [h.unit.id for h in hits]
        # Another connection sees a new data_version after any commit: the Retrieve made none.
        assert _data_version(watcher) == before
        assert _access(mem, unit.id) == (0, 100.0)
        assert mem.store_db.pending_accesses() == len(hits)
        assert mem.store_db.flush_access() == len(hits)
        assert _data_version(watcher) != before
        assert _access(mem, unit.id) == (1, 5_000.0)
    finally:
        watcher.close()
    # Access statistics commit without their own fsync; everything else still has one.
    with mem.store_db.reading() as db:
        assert db.execute('PRAGMA synchronous').fetchone()[0] == 2  # FULL


def test_the_writer_records_accesses_shortly_after_the_retrieve(mem_factory: Any, tmp_path: Path) -> None:
    mem: BrainMem = mem_factory(tmp_path / 'mem', clock=lambda: 5_000.0)
    unit = mem.store('The spare batteries are in the hallway cupboard.', stamp=100.0)
    for _ in range(3):
        mem.retrieve('where are the spare batteries?')
    assert wait_for(lambda: _access(mem, unit.id)[0] == 3, timeout=20.0)
    assert mem.store_db.pending_accesses() == 0


def test_close_writes_the_accesses_noted_and_get_shows_them(mem_factory: Any, tmp_path: Path) -> None:
    mem: BrainMem = mem_factory(tmp_path / 'mem', clock=lambda: 5_000.0)
    unit = mem.store('The spare batteries are in the hallway cupboard.', stamp=100.0)
    mem.store_db.flush_after_s = 3600.0
    mem.retrieve('where are the spare batteries?')
    assert mem.get([unit.id])[0].access_count == 1  # get() writes the notes first
    mem.retrieve('spare batteries')
    mem.close()
    reopened: BrainMem = mem_factory(tmp_path / 'mem')
    assert _access(reopened, unit.id)[0] == 2


def test_a_late_write_never_moves_last_access_back(mem_factory: Any, tmp_path: Path) -> None:
    now = [5_000.0]
    mem: BrainMem = mem_factory(tmp_path / 'mem', clock=lambda: now[0])
    unit = mem.store('The spare batteries are in the hallway cupboard.', stamp=100.0)
    mem.store_db.flush_after_s = 3600.0
    mem.retrieve('where are the spare batteries?')  # noted at 5,000
    now[0] = 9_000.0
    mem.reinforce([unit.id], reward=1.0)  # written at once, at 9,000
    mem.store_db.flush_access()
    assert _access(mem, unit.id) == (1, 9_000.0)


def test_consolidation_folds_the_accesses_noted_just_before(mem_factory: Any, tmp_path: Path) -> None:
    mem: BrainMem = mem_factory(tmp_path / 'mem', clock=lambda: 5_000.0)
    unit = mem.store('The spare batteries are in the hallway cupboard.', stamp=100.0)
    mem.store_db.flush_after_s = 3600.0
    mem.retrieve('where are the spare batteries?')
    mem.consolidate(now=5_060.0)
    count, folded = file_rows(mem.store_db.path, 'SELECT access_count, folded_access FROM units WHERE id = ?',
                              (unit.id,))[0]
    assert (count, folded) == (1, 1)


def test_answers_do_not_depend_on_when_the_accesses_are_written(mem_factory: Any, tmp_path: Path) -> None:
    now = [5_000.0]
    late: BrainMem = mem_factory(tmp_path / 'late', clock=lambda: now[0])
    early: BrainMem = mem_factory(tmp_path / 'early', clock=lambda: now[0])
    texts = ['The spare batteries are in the hallway cupboard.', 'The cupboard in the hallway sticks.',
             'I put new batteries in the remote control.', 'The remote control is on the sofa.',
             'The hallway light is broken.']
    for mem in (late, early):
        for i, text in enumerate(texts):
            mem.store(text, stamp=100.0 + i)
    late.store_db.flush_after_s = 3600.0
    for query in ['batteries', 'hallway cupboard', 'remote control', 'batteries', 'hallway']:
        now[0] += 7200.0
        got = [(h.unit.id, h.score, h.unit.access_count, h.unit.last_access) for h in late.retrieve(query)]
        early.store_db.flush_access()
        want = [(h.unit.id, h.score, h.unit.access_count, h.unit.last_access) for h in early.retrieve(query)]
        early.store_db.flush_access()
        assert got == want
    assert late.store_db.pending_accesses() > 0


def test_close_during_the_writers_wait_for_a_gap_ends(mem_factory: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # The writer waits for a quiet spell before it writes; a close in that wait sets the
    # stop and the wake, and the writer then clears the wake for its write. It used to
    # wait for the wake again after the write and never end: close() hung in join.
    monkeypatch.setattr(access, '_QUIET_LIMIT_S', 3.0)  # a wait wide enough to close in
    mem: BrainMem = mem_factory(tmp_path / 'mem', clock=lambda: 5_000.0)
    unit = mem.store('The spare batteries are in the hallway cupboard.', stamp=100.0)
    mem.store_db.flush_after_s = 0.01
    closed = threading.Event()

    def close() -> None:
        mem.close()
        closed.set()

    with mem.store_db.request():  # a request under way: the writer waits for quiet
        mem.store_db.touch([unit.id], 5_000.0)
        time.sleep(0.5)  # the writer is past its flush delay, waiting for quiet
        closer = threading.Thread(target=close, daemon=True)
        closer.start()
        time.sleep(0.5)  # close() has set the stop and the wake and waits for the writer
    assert closed.wait(10.0), 'close() did not return: the access writer never ended'
    assert _access(mem, unit.id) == (1, 5_000.0)
