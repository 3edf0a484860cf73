"""Unit vectors held in memory: what the store hands out, kept right across writes."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from brainmem_ros.memory.config import MemoryConfig, StoreConfig
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.store.vector_cache import VectorCache, as_stored

TEXTS = [f'Put the {thing} on the {place}' for thing in ('red mug', 'blue plate', 'spoon', 'kettle', 'towel')
         for place in ('kitchen table', 'shelf', 'sink', 'counter')]


def _stored(path: Path, ids: list[int]) -> dict[int, np.ndarray]:
    store = SqliteStore(path, config=StoreConfig(vector_cache=False))
    try:
        return store.vectors(ids)
    finally:
        store.close()


def test_filled_after_opening_with_the_stored_vectors(mem_factory: Any, tmp_path: Path) -> None:
    mem = mem_factory()
    ids = [mem.store(t).id for t in TEXTS]
    mem.close()
    on_disk = _stored(tmp_path / 'mem' / 'memory.db', ids)
    mem = mem_factory()
    cache = mem.store_db.vector_cache
    assert cache is not None and cache.complete.wait(30)
    assert len(cache) == len(ids)
    held, missing = cache.get(ids)
    assert missing == []
    for uid in ids:
        # float16 in memory: within 1e-3 of what SQLite holds, and exactly as_stored of it.
        assert np.array_equal(held[uid], as_stored(on_disk[uid]))
        assert float(np.abs(held[uid] - on_disk[uid]).max()) < 1e-3
    assert mem.store_db.vectors(ids).keys() == set(ids)


def test_inserts_and_deletes_keep_it_right(mem_factory: Any) -> None:
    mem = mem_factory()
    cache = mem.store_db.vector_cache
    unit = mem.store('The charger is behind the sofa')
    assert cache.get([unit.id])[1] == []  # held from the insert on
    mem.store_db.delete_units([unit.id])
    assert cache.get([unit.id]) == ({}, [unit.id])
    assert mem.store_db.vectors([unit.id]) == {}
    # The id may be used again (SQLite reuses the largest rowid): the new vector is held.
    other = mem.store('A parcel was left at the front door')
    vec = mem.store_db.vectors([other.id])[other.id]
    assert np.array_equal(vec, as_stored(mem.embedder.embed([other.text])[0]))


def test_a_late_bulk_read_never_brings_back_an_old_vector() -> None:
    cache = VectorCache()
    old, new = np.full((1, 4), 0.5, dtype=np.float32), np.full((1, 4), -0.25, dtype=np.float32)
    ids = np.asarray([7], dtype=np.int64)
    cache.put(7, new[0])
    cache.offer(ids, old)  # read before the insert, offered after it
    assert np.array_equal(cache.get([7])[0][7], new[0])
    cache.discard([7])
    cache.offer(ids, old)  # read before the delete, offered after it
    assert cache.get([7]) == ({}, [7])


def test_vectors_beyond_float16_are_read_from_disk() -> None:
    cache = VectorCache()
    cache.offer(np.asarray([1, 2], dtype=np.int64), np.asarray([[1e6, 0.0], [0.5, 0.5]], dtype=np.float32))
    held, missing = cache.get([1, 2])
    assert missing == [1] and list(held) == [2]
    assert np.array_equal(as_stored(np.asarray([1e6, 0.1], dtype=np.float32))[:1], [1e6])


def test_retrieve_answers_the_same_with_and_without_it(mem_factory: Any, tmp_path: Path) -> None:
    mem = mem_factory()
    for t in TEXTS:
        mem.store(t)
    mem.close()
    runs = []
    for held in (True, False):
        config = dataclasses.replace(MemoryConfig(), store=StoreConfig(vector_cache=held))
        mem = mem_factory(config=config)
        if held:
            assert mem.store_db.vector_cache.complete.wait(30)
        else:
            assert mem.store_db.vector_cache is None
        runs.append([(r.unit.id, r.score) for r in mem.retrieve('where is the kettle?', top_k=8)])
        mem.close()
    with_cache, without = runs
    assert [i for i, _ in with_cache] == [i for i, _ in without]
    assert np.allclose([s for _, s in with_cache], [s for _, s in without], atol=2e-3)
