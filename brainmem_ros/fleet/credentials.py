"""The robot's database password, from a file only the node's user can read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from brainmem_ros.fleet.errors import CredentialsError


def read_password(path: str | Path) -> str:
    """The first line of ``path``; refused unless the file is ours and mode 0600 or stricter.

    A group- or world-readable file means the secret is already exposed: the node
    stops instead of using it, like ssh with a loose private key.
    """
    p = Path(path).expanduser()
    try:
        st = p.stat()
    except OSError as exc:
        msg = f'fleet credentials file {p} cannot be read: {exc.strerror}'
        raise CredentialsError(msg) from None
    if not stat.S_ISREG(st.st_mode):
        msg = f'fleet credentials file {p} is not a regular file'
        raise CredentialsError(msg)
    if st.st_uid != os.geteuid():
        msg = f'fleet credentials file {p} belongs to uid {st.st_uid}, not to this user ({os.geteuid()})'
        raise CredentialsError(msg)
    if st.st_mode & 0o077:
        msg = (f'fleet credentials file {p} has mode {stat.S_IMODE(st.st_mode):04o}: others can read '
               f'it; chmod 600 {p}')
        raise CredentialsError(msg)
    try:
        first = p.read_text(encoding='utf-8').splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        msg = f'fleet credentials file {p} cannot be read: {exc}'
        raise CredentialsError(msg) from None
    if not first or not first[0].strip():
        msg = f'fleet credentials file {p} is empty: its first line must be the password'
        raise CredentialsError(msg)
    return first[0].strip()


def write_password(path: str | Path, password: str) -> Path:
    """Create ``path`` with mode 0600 holding ``password`` (provisioning, tests, demo)."""
    p = Path(path)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w', encoding='utf-8') as f:
        f.write(password + '\n')
    os.chmod(p, 0o600)
    return p
