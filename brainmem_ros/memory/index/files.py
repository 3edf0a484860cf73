"""The index file: saved with the store generation and the last unit id it reflects and its
sha256, checked on load.

Units stored after a save have larger ids and do not change the generation
(:meth:`~brainmem_ros.memory.store.SqliteStore.bump_generation`), so a file whose
generation matches is loaded and the caller adds the active units above its
``max_id`` from SQLite; any other change of the vector set makes the file stale.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path

import faiss

from brainmem_ros.errors import VectorIndexError
from brainmem_ros.memory.index.build import needs_rebuild
from brainmem_ros.memory.index.hot import DEFAULT_POLICY, HotIndex, IndexPolicy, index_from_bytes, serialized


@dataclass(frozen=True)
class IndexFileMeta:
    """Sidecar of an index file: what it reflects and how to check it."""

    generation: int
    count: int
    dim: int
    kind: str
    sha256: str
    max_id: int
    """The largest unit id in the store when the index was copied (units above it are not in it)."""


@dataclass(frozen=True)
class IndexSnapshot:
    """A copy of the index with what it reflects: taken under the memory's lock, serialized and
    written after."""

    index: faiss.Index
    generation: int
    count: int
    dim: int
    kind: str
    max_id: int
    seq: int = 0  # order of taking: of two snapshots of one index, the larger is the newer


_TAKEN = itertools.count(1)


def snapshot_index(index: HotIndex, *, generation: int, max_id: int) -> IndexSnapshot:
    """A copy of the index, the store generation and the largest unit id it reflects (in memory,
    no I/O).

    Take it under the lock that orders the index's changes and the store's commits, and
    read ``max_id`` under it too: ``seq`` then orders the snapshots, the copy holds no unit
    above ``max_id``, and every unit committed after it is above ``max_id``.
    """
    return IndexSnapshot(index.copy(), generation, len(index), index.dim, index.kind, max_id,
                         next(_TAKEN))


def write_snapshot(path: Path, snap: IndexSnapshot) -> None:
    """Serialize ``snap`` and write index + sidecar atomically (temp file, fsync, rename, fsync dir)."""
    data = serialized(snap.index).data
    meta = IndexFileMeta(generation=snap.generation, count=snap.count, dim=snap.dim, kind=snap.kind,
                         sha256=hashlib.sha256(data).hexdigest(), max_id=snap.max_id)
    _atomic_write(path, data)
    _atomic_write(path.with_suffix(path.suffix + '.json'), json.dumps(meta.__dict__).encode())


def save_index(index: HotIndex, path: Path, *, generation: int, max_id: int) -> None:
    """Write index + sidecar atomically (temp file, fsync, rename, fsync dir)."""
    write_snapshot(path, snapshot_index(index, generation=generation, max_id=max_id))


@dataclass(frozen=True)
class SavedIndex:
    """An index read from its file, and the largest unit id it reflects."""

    index: HotIndex
    max_id: int


def load_index(path: Path, *, dim: int, generation: int, policy: IndexPolicy = DEFAULT_POLICY
               ) -> tuple[SavedIndex | None, str]:
    """The saved index and the largest unit id it reflects, if it is intact, reflects
    ``generation`` and suits its size; else (None, why)."""
    meta_path = path.with_suffix(path.suffix + '.json')
    if not path.exists() or not meta_path.exists():
        return None, 'no saved vector index'
    try:
        raw = json.loads(meta_path.read_text())
        if isinstance(raw, dict) and 'max_id' not in raw:
            # An older version changed the generation with every new unit and did not
            # record the last one: its file cannot say which units it lacks.
            return None, 'vector index sidecar is from an older version (no max_id)'
        meta = IndexFileMeta(**raw)
    except (ValueError, TypeError) as exc:
        return None, f'vector index sidecar is unreadable ({exc})'
    if not isinstance(meta.max_id, int) or isinstance(meta.max_id, bool) or meta.max_id < 0:
        return None, f'vector index sidecar is unreadable (max_id {meta.max_id!r})'
    if meta.generation != generation:
        return None, (f'vector index reflects store generation {meta.generation}, '
                      f'the store is at {generation}')
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != meta.sha256:
        return None, 'vector index file is damaged (checksum mismatch)'
    if meta.dim != dim:
        return None, f'vector index has dimension {meta.dim}, the encoder gives {dim}'
    try:
        index = index_from_bytes(dim, data)
    except (RuntimeError, VectorIndexError) as exc:
        return None, f'vector index file is unreadable ({exc})'
    if len(index) != meta.count:
        return None, 'vector index holds a different number of vectors than recorded'
    why = needs_rebuild(index, policy=policy)
    if why is not None:
        return None, why
    return SavedIndex(index, meta.max_id), 'loaded'


def _atomic_write(path: Path, data: bytes | memoryview) -> None:
    tmp = path.with_name(path.name + '.tmp')
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, 'wb') as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
