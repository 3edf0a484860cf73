"""The hot vector index: exact and approximate kinds, the automatic choice, files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from brainmem_ros.errors import VectorIndexError
from brainmem_ros.memory.index import (
    Batches,
    FlatIndex,
    IndexPolicy,
    IvfIndex,
    build_index,
    index_from_bytes,
    load_index,
    needs_rebuild,
    recall_at_k,
    save_index,
)

DIM = 48
# Small thresholds so that the approximate path runs in well under a second.
POLICY = IndexPolicy(exact_below=3000, min_nlist=16, calibration_queries=100)


def clustered(n: int, *, seed: int, centres: int = 60, spread: float = 0.7) -> npt.NDArray[np.float32]:
    """Unit vectors around fixed random centres: embeddings of a few topics, roughly."""
    rng = np.random.default_rng(0)
    c = rng.standard_normal((centres, DIM))
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    rng = np.random.default_rng(seed)
    x = c[rng.integers(0, centres, n)] + spread * rng.standard_normal((n, DIM)) / np.sqrt(DIM)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = x.astype(np.float32)
    return out


def batches_of(ids: npt.NDArray[np.int64], vecs: npt.NDArray[np.float32], size: int = 1000) -> Batches:
    for start in range(0, len(ids), size):
        yield ids[start:start + size], vecs[start:start + size]


def source(n: int, *, seed: int = 1) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    ids = np.arange(1, n + 1, dtype=np.int64) * 3  # ids need not be dense
    return ids, clustered(n, seed=seed)


def test_small_store_gets_exact_index() -> None:
    ids, vecs = source(500)
    index = build_index(DIM, lambda: batches_of(ids, vecs), policy=POLICY)
    assert isinstance(index, FlatIndex)
    assert index.kind == 'flat-ip'
    assert len(index) == 500


def test_large_store_gets_ivf_with_recall_at_10_of_at_least_095() -> None:
    ids, vecs = source(12000)
    index = build_index(DIM, lambda: batches_of(ids, vecs), policy=POLICY)
    assert isinstance(index, IvfIndex)
    assert len(index) == 12000
    assert index.nlist == POLICY.nlist_for(12000)
    assert index.kind.startswith(f'ivf{index.nlist}-sq8')
    exact = FlatIndex(DIM)
    exact.add(ids, vecs)
    queries = clustered(300, seed=99)  # fresh queries from the same topics
    _, truth = exact.search(queries, 10)
    _, got = index.search(queries, 10)
    assert recall_at_k(got, truth) >= 0.95


def test_lower_effort_scans_fewer_lists_and_still_finds_near_copies() -> None:
    ids, vecs = source(12000)
    index = build_index(DIM, lambda: batches_of(ids, vecs), policy=POLICY)
    assert isinstance(index, IvfIndex) and index.nprobe >= 4
    queries = clustered(300, seed=99)
    exact = FlatIndex(DIM)
    exact.add(ids, vecs)
    _, truth = exact.search(queries, 10)
    full = recall_at_k(index.search(queries, 10)[1], truth)
    quarter = recall_at_k(index.search(queries, 10, effort=0.25)[1], truth)
    assert quarter < full  # fewer lists scanned: the effort really changes the search
    # What Store uses it for: a stored vector's own neighbourhood (near-duplicates).
    _, own = index.search(vecs[:200], 1, effort=0.25)
    assert (own[:, 0] == ids[:200]).mean() >= 0.98
    assert FlatIndex(DIM).search(queries[:1], 3, effort=0.1)[1].shape == (1, 1)  # exact: ignored


def test_build_is_deterministic() -> None:
    ids, vecs = source(6000)
    a = build_index(DIM, lambda: batches_of(ids, vecs), policy=POLICY)
    b = build_index(DIM, lambda: batches_of(ids, vecs), policy=POLICY)
    assert a.kind == b.kind
    queries = clustered(20, seed=5)
    assert np.array_equal(a.search(queries, 10)[1], b.search(queries, 10)[1])


@pytest.mark.parametrize('n', [500, 6000])
def test_add_remove_search(n: int) -> None:
    ids, vecs = source(n)
    index = build_index(DIM, lambda: batches_of(ids, vecs), policy=POLICY)
    gone = ids[::7]
    index.remove(gone)
    index.remove(np.asarray([10**9], dtype=np.int64))  # absent ids are ignored
    assert len(index) == n - len(gone)
    _, found = index.search(vecs[::7][:50], 10)
    assert not set(found.ravel().tolist()) & set(gone.tolist())
    # Marginalized units come back: re-added vectors are found again.
    index.add(gone[:50], vecs[::7][:50])
    _, top = index.search(vecs[::7][:50], 1)
    assert np.mean(top[:, 0] == gone[:50]) >= 0.95
    index.remove(np.asarray([], dtype=np.int64))
    index.add(np.asarray([], dtype=np.int64), np.zeros((0, DIM), dtype=np.float32))
    assert len(index) == n - len(gone) + 50


def test_search_on_empty_and_tiny_index() -> None:
    index = FlatIndex(DIM)
    _, ids = index.search(clustered(2, seed=3), 10)
    assert ids.shape == (2, 1) and (ids == -1).all()
    index.add(np.asarray([4], dtype=np.int64), clustered(1, seed=4))
    _, ids = index.search(clustered(1, seed=4), 10)
    assert ids.tolist() == [[4]]


@pytest.mark.parametrize('n', [500, 6000])
def test_save_load_round_trip(tmp_path: Path, n: int) -> None:
    ids, vecs = source(n)
    index = build_index(DIM, lambda: batches_of(ids, vecs), policy=POLICY)
    path = tmp_path / 'vectors.faiss'
    save_index(index, path, generation=7, max_id=int(ids.max()))
    saved, why = load_index(path, dim=DIM, generation=7, policy=POLICY)
    assert why == 'loaded'
    assert saved is not None and saved.max_id == int(ids.max())
    loaded = saved.index
    assert type(loaded) is type(index)
    assert loaded.kind == index.kind  # nprobe travels with the file
    queries = clustered(30, seed=8)
    assert np.array_equal(loaded.search(queries, 10)[1], index.search(queries, 10)[1])
    assert oct(path.stat().st_mode & 0o777) == '0o600'


def test_damaged_or_stale_files_mean_rebuild(tmp_path: Path) -> None:
    ids, vecs = source(6000)
    index = build_index(DIM, lambda: batches_of(ids, vecs), policy=POLICY)
    path = tmp_path / 'vectors.faiss'
    save_index(index, path, generation=3, max_id=int(ids.max()))

    assert load_index(path, dim=DIM, generation=4, policy=POLICY)[0] is None  # behind the store
    assert 'dimension' in load_index(path, dim=DIM + 1, generation=3, policy=POLICY)[1]

    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))
    loaded, why = load_index(path, dim=DIM, generation=3, policy=POLICY)
    assert loaded is None and 'damaged' in why

    path.write_bytes(bytes(data[:100]))
    assert load_index(path, dim=DIM, generation=3, policy=POLICY)[0] is None

    path.with_suffix('.faiss.json').write_text('{not json')
    loaded, why = load_index(path, dim=DIM, generation=3, policy=POLICY)
    assert loaded is None and 'sidecar' in why

    path.unlink()
    assert load_index(path, dim=DIM, generation=3, policy=POLICY) == (None, 'no saved vector index')


def test_garbage_bytes_are_refused() -> None:
    with pytest.raises((RuntimeError, VectorIndexError)):
        index_from_bytes(DIM, b'\x00' * 64)
    with pytest.raises(VectorIndexError):
        FlatIndex.from_bytes(DIM + 1, FlatIndex(DIM).to_bytes())
    with pytest.raises(VectorIndexError):
        IvfIndex.from_bytes(DIM, FlatIndex(DIM).to_bytes())


def test_outgrown_index_is_rebuilt_on_load(tmp_path: Path) -> None:
    ids, vecs = source(4000)
    flat = FlatIndex(DIM)  # a store that grew one Store at a time past the threshold
    flat.add(ids, vecs)
    assert needs_rebuild(flat, policy=POLICY) is not None
    path = tmp_path / 'vectors.faiss'
    save_index(flat, path, generation=1, max_id=int(ids.max()))
    loaded, why = load_index(path, dim=DIM, generation=1, policy=POLICY)
    assert loaded is None and 'outgrown' in why
    rebuilt = build_index(DIM, lambda: batches_of(ids, vecs), policy=POLICY)
    assert isinstance(rebuilt, IvfIndex)
    assert needs_rebuild(rebuilt, policy=POLICY) is None
    rebuilt.remove(ids[:3000])  # consolidation marginalized most of it
    assert needs_rebuild(rebuilt, policy=POLICY) is not None


def test_nlist_grows_with_sqrt_n() -> None:
    policy = IndexPolicy()
    assert policy.nlist_for(100_000) == 256
    assert policy.nlist_for(1_000_000) == 1024
    assert policy.nlist_for(10) == policy.min_nlist
    assert policy.kind_for(policy.exact_below - 1) == 'flat'
    assert policy.kind_for(policy.exact_below) == 'ivf'
