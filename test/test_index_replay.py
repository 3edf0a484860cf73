"""After a crash the saved index is loaded and the units stored since its save are added;
saves wait for the store to be idle (brainmem_ros.memory.index_saver).

A crash is a copy of the data directory taken while the memory is open (what a
``kill -9`` would leave), opened as a second store.
"""
# mypy: disallow-untyped-calls=False

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from reliability.checks import crash_image, index_problems

from brainmem_ros.memory import BrainMem, MemoryConfig

INDEX = 'vectors.faiss'
SIDECAR = 'vectors.faiss.json'
TEXTS = ['The red cup is on the kitchen table', 'The spare battery is in the garage drawer',
         'The cat sleeps on the blue sofa', 'The umbrella hangs by the front door',
         'The toolbox is under the stairs', 'The plant on the balcony needs water',
         'The passport is in the top desk drawer', 'The bicycle pump hangs in the shed']


def crash_copy(data: Path, dest: Path) -> Path:
    """The data directory as a kill -9 now would leave it: database, WAL, index file and sidecar."""
    image = crash_image(data, dest)
    for name in (INDEX, SIDECAR):
        shutil.copyfile(data / name, dest / name)
    return image.parent


def test_units_stored_after_the_save_are_added_to_the_loaded_index(tmp_path: Path, embedder: Any) -> None:
    data = tmp_path / 'mem'
    mem = BrainMem.open(data, embedder=embedder)
    try:
        saved = [mem.store(t).id for t in TEXTS[:5]]
        assert mem.save_index()
        later = {mem.store(t).id: t for t in TEXTS[5:]}
        assert min(later) > max(saved)
        image = crash_copy(data, tmp_path / 'image')
    finally:
        mem.close()
    with BrainMem.open(image, embedder=embedder) as again:
        # Before, every Store changed the generation: this open rebuilt the whole index.
        assert again.index_status == 'loaded, 3 newer units added from the store', again.index_status
        assert again._saver.saves == 0  # three units are no reason to rewrite the file at open
        assert index_problems(again) == []  # each active unit once, nothing else
        assert len(again.index) == again.stats().active_units == len(TEXTS)
        for uid, text in later.items():
            assert again.retrieve(text, top_k=1)[0].unit.id == uid


@pytest.mark.parametrize('change', ['marginalize', 'delete', 'restore'])
def test_a_change_other_than_new_units_after_the_save_means_rebuild(
        tmp_path: Path, embedder: Any, change: str) -> None:
    data = tmp_path / 'mem'
    mem = BrainMem.open(data, embedder=embedder)
    try:
        ids = [mem.store(t).id for t in TEXTS[:5]]
        target = ids[2]
        vector = mem.store_db.vectors([target])[target]
        if change == 'restore':
            mem.forget([target], mode='marginalize')
        assert mem.save_index()
        mem.store(TEXTS[5])  # a new unit too: the replay alone would not restore the old one
        if change == 'delete':
            mem.forget([target], mode='delete', confirm=True)
        else:
            mem.forget([target], mode=change)
        image = crash_copy(data, tmp_path / 'image')
    finally:
        mem.close()
    with BrainMem.open(image, embedder=embedder) as again:
        assert again.index_status.startswith('rebuilt from the store (vector index reflects store '
                                              'generation'), again.index_status
        assert index_problems(again) == []
        _, found = again.index.search(vector.reshape(1, -1), 3)
        assert (target in found[0].tolist()) == (change == 'restore')


def test_a_sidecar_of_an_older_version_means_rebuild(tmp_path: Path, embedder: Any) -> None:
    # Its generation changed with every Store, but it does not say which units it holds:
    # a crash after a version upgrade must not load it as complete.
    data = tmp_path / 'mem'
    with BrainMem.open(data, embedder=embedder) as mem:
        for text in TEXTS[:3]:
            mem.store(text)
    meta = json.loads((data / SIDECAR).read_text())
    meta.pop('max_id', None)  # what an older version wrote
    (data / SIDECAR).write_text(json.dumps(meta))
    with BrainMem.open(data, embedder=embedder) as again:
        assert again.index_status.startswith('rebuilt from the store (vector index sidecar is from '
                                             'an older version'), again.index_status
        assert index_problems(again) == []


def test_no_snapshot_while_requests_come_and_one_once_they_stop(mem_factory: Any, tmp_path: Path) -> None:
    mem: BrainMem = mem_factory(tmp_path / 'mem', config=MemoryConfig.from_mapping(
        {'store.index_save_every': 3}))
    mem._saver.idle_s = 1.5  # far longer than any gap of the stream below
    taken: list[float] = []
    snapshot = mem._saver._snapshot

    def counted() -> Any:
        taken.append(time.monotonic())
        return snapshot()

    mem._saver._snapshot = counted
    saves = mem._saver.saves
    started = time.monotonic()
    for text in TEXTS[:3]:
        mem.store(text)  # the third change makes a save due
    while time.monotonic() < started + 2.5:
        mem.retrieve('where is the umbrella?', top_k=3)
    stopped = time.monotonic()
    # Before, the saver waited at most 0.2 s for a quiet spell and then copied the index
    # under the lock among the requests (4.2 s Stores at 1M units).
    assert [t - started for t in taken if t <= stopped] == []
    deadline = time.monotonic() + 60
    while mem._saver.saves == saves and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mem._saver.saves == saves + 1 and len(taken) == 1
    assert taken[0] >= stopped + 0.9 * mem._saver.idle_s  # after the idle spell, not during it


def test_a_due_save_goes_ahead_under_a_stream_that_never_pauses(mem_factory: Any, tmp_path: Path) -> None:
    # A perception topic never leaves the store idle for long: the save that waited for a
    # quiet spell would never come, and after a crash the stale file would cost a rebuild.
    mem: BrainMem = mem_factory(tmp_path / 'mem', config=MemoryConfig.from_mapping(
        {'store.index_save_every': 3}))
    mem._saver.idle_s = 600.0  # no quiet spell that long
    mem._saver.max_wait_s = 1.0
    saves = mem._saver.saves
    started = time.monotonic()
    for text in TEXTS[:3]:
        mem.store(text)  # the third change makes a save due
    due = time.monotonic()
    while mem._saver.saves == saves and time.monotonic() < started + 30:
        mem.retrieve('where is the umbrella?', top_k=3)
    assert mem._saver.saves == saves + 1
    assert time.monotonic() - due >= 0.9 * mem._saver.max_wait_s  # it waited for a gap first
    meta = json.loads((tmp_path / 'mem' / 'vectors.faiss.json').read_text())
    assert meta['count'] == len(mem.index) and meta['max_id'] >= 3


def test_close_wakes_a_saver_waiting_for_the_store_to_be_idle(mem_factory: Any, tmp_path: Path) -> None:
    mem: BrainMem = mem_factory(tmp_path / 'mem', config=MemoryConfig.from_mapping(
        {'store.index_save_every': 1}))
    mem._saver.idle_s = 600.0  # never idle that long here: the saver keeps waiting
    saves = mem._saver.saves
    mem.store(TEXTS[0])  # a save is due
    thread = mem._saver._thread
    assert isinstance(thread, threading.Thread) and thread.is_alive()
    time.sleep(0.5)  # before, a due save was written within a few milliseconds of quiet
    assert mem._saver.saves == saves, 'a save did not wait for the idle spell'
    started = time.monotonic()
    mem.close()
    took = time.monotonic() - started
    assert not thread.is_alive()
    assert mem._saver.saves == saves + 1  # the save at close
    # Its wait was on the stop event: woken at once, not at the end of its 600 s spell.
    assert took < 60, took
    reopened: BrainMem = mem_factory(tmp_path / 'mem')
    assert reopened.index_status == 'loaded' and len(reopened.index) == 1
