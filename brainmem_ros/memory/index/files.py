"""The index file: saved with the store generation it reflects and its sha256, checked on load."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from brainmem_ros.errors import VectorIndexError
from brainmem_ros.memory.index.build import needs_rebuild
from brainmem_ros.memory.index.hot import DEFAULT_POLICY, HotIndex, IndexPolicy, index_from_bytes


@dataclass(frozen=True)
class IndexFileMeta:
    """Sidecar of an index file: what it reflects and how to check it."""

    generation: int
    count: int
    dim: int
    kind: str
    sha256: str


def save_index(index: HotIndex, path: Path, *, generation: int) -> None:
    """Write index + sidecar atomically (temp file, fsync, rename, fsync dir)."""
    data = index.to_bytes()
    meta = IndexFileMeta(generation=generation, count=len(index), dim=index.dim, kind=index.kind,
                         sha256=hashlib.sha256(data).hexdigest())
    _atomic_write(path, data)
    _atomic_write(path.with_suffix(path.suffix + '.json'), json.dumps(meta.__dict__).encode())


def load_index(path: Path, *, dim: int, generation: int, policy: IndexPolicy = DEFAULT_POLICY
               ) -> tuple[HotIndex | None, str]:
    """The saved index if it is intact, reflects ``generation`` and suits its size; else (None, why)."""
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
        index = index_from_bytes(dim, data)
    except (RuntimeError, VectorIndexError) as exc:
        return None, f'vector index file is unreadable ({exc})'
    if len(index) != meta.count:
        return None, 'vector index holds a different number of vectors than recorded'
    why = needs_rebuild(index, policy=policy)
    if why is not None:
        return None, why
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
