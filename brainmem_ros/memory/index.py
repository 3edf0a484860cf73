"""The hot vector index: a derived, rebuildable copy of the active units' vectors.

SQLite is the source of truth. The index file records the store generation it
reflects and its own sha256; on open, any disagreement (a crash between commit
and save, a truncated or bit-flipped file, a deleted file) means "rebuild from
SQLite", never a wrong answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import faiss
import numpy as np
import numpy.typing as npt

from brainmem_ros.errors import VectorIndexError


class VectorIndex(Protocol):
    """Inner-product search over unit vectors keyed by unit id."""

    @property
    def kind(self) -> str:
        """Human-readable description, e.g. ``flat-ip``."""
        ...

    def __len__(self) -> int: ...

    def add(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors under ``ids``."""
        ...

    def remove(self, ids: npt.NDArray[np.int64]) -> None:
        """Remove ``ids`` (absent ids are ignored)."""
        ...

    def search(self, queries: npt.NDArray[np.float32], k: int
               ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Top-k (scores, ids) per query row; missing slots have id -1."""
        ...


class FlatIndex:
    """Exact inner-product search (FAISS ``IndexIDMap2(IndexFlatIP)``), thread-safe."""

    def __init__(self, dim: int, index: faiss.Index | None = None) -> None:
        self.dim = dim
        self._index = index if index is not None else faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self._lock = threading.Lock()

    @property
    def kind(self) -> str:
        """Index description."""
        return 'flat-ip'

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors under ``ids``."""
        if len(ids) == 0:
            return
        vecs = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        with self._lock:
            self._index.add_with_ids(vecs, np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: npt.NDArray[np.int64]) -> None:
        """Remove ``ids``."""
        if len(ids) == 0:
            return
        with self._lock:
            self._index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))  # type: ignore[arg-type]

    def search(self, queries: npt.NDArray[np.float32], k: int
               ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Top-k (scores, ids) per query."""
        q = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        with self._lock:
            k = max(1, min(k, max(1, int(self._index.ntotal))))
            scores, ids = self._index.search(q, k)
        return scores, ids

    def to_bytes(self) -> bytes:
        """Serialized FAISS index (FAISS's own format, never pickle)."""
        with self._lock:
            return bytes(faiss.serialize_index(self._index))

    @classmethod
    def from_bytes(cls, dim: int, data: bytes) -> FlatIndex:
        """Load an index written by :meth:`to_bytes`."""
        index = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))
        if index.d != dim:
            msg = f'vector index has dimension {index.d}, the encoder gives {dim}'
            raise VectorIndexError(msg)
        return cls(dim, index)


@dataclass(frozen=True)
class IndexFileMeta:
    """Sidecar of an index file: what it reflects and how to check it."""

    generation: int
    count: int
    dim: int
    kind: str
    sha256: str


def save_index(index: FlatIndex, path: Path, *, generation: int) -> None:
    """Write index + sidecar atomically (temp file, fsync, rename, fsync dir)."""
    data = index.to_bytes()
    meta = IndexFileMeta(generation=generation, count=len(index), dim=index.dim, kind=index.kind,
                         sha256=hashlib.sha256(data).hexdigest())
    _atomic_write(path, data)
    _atomic_write(path.with_suffix(path.suffix + '.json'), json.dumps(meta.__dict__).encode())


def load_index(path: Path, *, dim: int, generation: int) -> tuple[FlatIndex | None, str]:
    """The saved index if it is intact and reflects ``generation``; else (None, why)."""
    meta_path = path.with_suffix(path.suffix + '.json')
    if not path.exists() or not meta_path.exists():
        return None, 'no saved vector index'
    try:
        raw = json.loads(meta_path.read_text())
        meta = IndexFileMeta(**raw)
    except (ValueError, TypeError) as exc:
        return None, f'vector index sidecar is unreadable ({exc})'
    if meta.generation != generation:
        return None, (f'vector index reflects store generation {meta.generation}, '
                      f'the store is at {generation}')
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != meta.sha256:
        return None, 'vector index file is damaged (checksum mismatch)'
    if meta.dim != dim:
        return None, f'vector index has dimension {meta.dim}, the encoder gives {dim}'
    try:
        index = FlatIndex.from_bytes(dim, data)
    except (RuntimeError, VectorIndexError) as exc:
        return None, f'vector index file is unreadable ({exc})'
    if len(index) != meta.count:
        return None, 'vector index holds a different number of vectors than recorded'
    return index, 'loaded'


def _atomic_write(path: Path, data: bytes) -> None:
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
