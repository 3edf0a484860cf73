"""Real resource faults for tests that run as root: small tmpfs (full disk), read-only mounts.

Tests run as root here, and root ignores ``chmod``: a 0500 directory stops nothing.
A read-only bind mount and a tmpfs of a few megabytes are the real faults; when
``mount`` is not permitted (no root, no CAP_SYS_ADMIN) the tests that need them skip.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(*args: str) -> None:
    result = subprocess.run(['mount', *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        msg = f'mount {" ".join(args)} failed: {result.stderr.strip()}'
        raise OSError(msg)


def _umount(path: Path) -> None:
    # Lazy: a test that failed may still hold files open there.
    subprocess.run(['umount', '-l', str(path)], capture_output=True, check=False)


@contextmanager
def tmpfs(path: Path, *, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (e.g. '4m') mounted at ``path``; skips the test if mount is refused."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        _mount('-t', 'tmpfs', '-o', f'size={size},mode=0700', 'tmpfs', str(path))
    except (OSError, FileNotFoundError) as exc:
        pytest.skip(f'needs a tmpfs mount (root with CAP_SYS_ADMIN): {exc}')
    try:
        yield path
    finally:
        _umount(path)


@contextmanager
def read_only_view(src: Path, dst: Path) -> Iterator[Path]:
    """``src`` bind-mounted read-only at ``dst`` (writes fail with EROFS, even for root)."""
    dst.mkdir(parents=True, exist_ok=True)
    try:
        _mount('--bind', str(src), str(dst))
    except (OSError, FileNotFoundError) as exc:
        pytest.skip(f'needs a bind mount (root with CAP_SYS_ADMIN): {exc}')
    try:
        _mount('-o', 'remount,bind,ro', str(dst))
    except OSError as exc:
        _umount(dst)
        pytest.skip(f'cannot remount the bind mount read-only: {exc}')
    try:
        yield dst
    finally:
        _umount(dst)


def fill(directory: Path, *, chunk: int = 64 * 1024) -> Path:
    """Fill the file system of ``directory`` until ENOSPC; returns the filler file."""
    filler = directory / 'filler.bin'
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while chunk:
            try:
                os.write(fd, b'\0' * chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                chunk //= 2
        os.fsync(fd)
    finally:
        os.close(fd)
    return filler


def free_bytes(directory: Path) -> int:
    """Bytes still available to an unprivileged writer of ``directory``'s file system."""
    st = os.statvfs(directory)
    return st.f_bavail * st.f_frsize
