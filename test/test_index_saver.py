"""The hot index is written off the memory's lock (brainmem_ros.memory.index_saver)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rosutil import wait_for

from brainmem_ros.memory import BrainMem, MemoryConfig, index_saver
from brainmem_ros.memory.index import FlatIndex, load_index, snapshot_index
from brainmem_ros.memory.index_saver import IndexSaver


def test_requests_are_served_while_the_index_file_is_written(mem_factory: Any, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    writing, gate = threading.Event(), threading.Event()
    real = index_saver.write_snapshot

    def slow_write(path: Path, snap: Any) -> None:
        writing.set()
        assert gate.wait(60), 'the test never let the write finish'
        real(path, snap)

    mem: BrainMem = mem_factory(tmp_path / 'mem', config=MemoryConfig.from_mapping(
        {'store.index_save_every': 5}))
    monkeypatch.setattr(index_saver, 'write_snapshot', slow_write)
    for i in range(5):
        mem.store(f'The parcel number {i} is on the shelf in the garage.')
    assert writing.wait(30), 'the fifth change did not start a save'
    # The file is being written: the memory's lock is free, so requests go on (before,
    # the save ran under the lock and these calls would wait for it).
    stored = mem.store('The toolbox is under the workbench.')
    assert any(h.unit.id == stored.id for h in mem.retrieve('where is the toolbox?', top_k=3))
    gate.set()
    mem.close()  # waits for the background save, then saves once more
    assert mem._saver.saves == 3  # the first was the new store's empty index, at open
    meta = json.loads((tmp_path / 'mem' / 'vectors.faiss.json').read_text())
    assert meta['count'] == 6  # the save at close has the unit stored during the first one
    reopened: BrainMem = mem_factory(tmp_path / 'mem')
    assert reopened.index_status == 'loaded' and len(reopened.index) == 6


def test_an_older_copy_never_replaces_a_newer_file(tmp_path: Path) -> None:
    index = FlatIndex(8)
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(3, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index.add(np.array([1], dtype=np.int64), vecs[:1])
    older = snapshot_index(index, generation=1, max_id=1)
    index.add(np.array([2, 3], dtype=np.int64), vecs[1:])
    newer = snapshot_index(index, generation=2, max_id=3)
    path = tmp_path / 'vectors.faiss'
    saver = IndexSaver(path, lambda: newer, idle=lambda: 0.0)
    assert saver.write(newer) and saver.write(older)  # the older one is skipped, not an error
    loaded, why = load_index(path, dim=8, generation=2)
    assert why == 'loaded' and loaded is not None and len(loaded.index) == 3
    saver.close()


def test_close_writes_the_index_file_only_when_the_index_changed(mem_factory: Any, tmp_path: Path) -> None:
    # At 1M units a save serializes and writes 375 MB (several seconds of shutdown): a
    # store opened, read and closed has nothing new to write.
    path = tmp_path / 'mem'
    first: BrainMem = mem_factory(path)
    first.store('The parcel is on the shelf in the garage.')
    first.close()
    file = path / 'vectors.faiss'
    written = (file.stat().st_ino, file.stat().st_mtime_ns)
    reader: BrainMem = mem_factory(path)
    assert reader.index_status == 'loaded'
    assert reader.retrieve('where is the parcel?', top_k=3)
    reader.close()
    assert reader._saver.saves == 0
    assert (file.stat().st_ino, file.stat().st_mtime_ns) == written
    writer: BrainMem = mem_factory(path)
    writer.store('The toolbox is under the workbench.')
    writer.close()
    assert writer._saver.saves == 1 and file.stat().st_ino != written[0]
    last: BrainMem = mem_factory(path)
    assert last.index_status == 'loaded' and len(last.index) == 2


def test_a_failed_copy_does_not_end_later_background_saves(tmp_path: Path) -> None:
    # write() handles a disk that refuses the file; any other error of a save (no memory
    # for the copy) used to end the saver's thread, and no save ran again until close.
    index = FlatIndex(8)
    index.add(np.array([1], dtype=np.int64), np.eye(8, dtype=np.float32)[:1])
    snaps = iter([None, snapshot_index(index, generation=1, max_id=1)])
    failed = threading.Event()

    def snapshot() -> Any:
        snap = next(snaps)
        if snap is None:
            failed.set()
            raise MemoryError('no memory for the copy')
        return snap

    saver = IndexSaver(tmp_path / 'vectors.faiss', snapshot, idle=lambda: 60.0)
    try:
        saver.request()
        assert failed.wait(30)
        saver.request()
        assert wait_for(lambda: saver.saves == 1, timeout=30.0)
        loaded, why = load_index(tmp_path / 'vectors.faiss', dim=8, generation=1)
        assert why == 'loaded' and loaded is not None and len(loaded.index) == 1
    finally:
        saver.close()
