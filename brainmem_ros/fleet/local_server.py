"""A throw-away PostgreSQL with pgvector, for the tests, the demo and the benchmark.

The server binaries and ``vector.so`` come from the ``pgserver`` wheel (PostgreSQL 16,
pgvector 0.6); nothing is downloaded. The server listens on 127.0.0.1 at a free port,
robots authenticate with SCRAM passwords over TCP (as against a production server),
and the superuser connects through the Unix socket in the data directory. PostgreSQL
refuses to run as root: under root the server runs as the ``postgres`` system user
(created when missing) from a data directory of its own under the system temp dir.

>>> with LocalPostgres() as pg:                                  # doctest: +SKIP
...     print(pg.admin_conninfo())
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from brainmem_ros.fleet.errors import LocalServerError

if TYPE_CHECKING:
    from brainmem_ros.fleet.config import FleetConfig

ADMIN_USER = 'brainmem_admin'
SERVER_USER = 'postgres'
_START_TIMEOUT_S = 30.0


def server_bin_dir() -> Path | None:
    """The directory holding ``postgres`` and ``initdb`` from pgserver, or None."""
    # Located, not imported: importing pgserver sets up runtime directories we never use.
    spec = importlib.util.find_spec('pgserver')
    if spec is None or spec.origin is None:
        return None
    bin_dir = Path(spec.origin).parent / 'pginstall' / 'bin'
    return bin_dir if (bin_dir / 'postgres').is_file() else None


def missing_reason() -> str:
    """Why no local server can be started here ('' when one can)."""
    if server_bin_dir() is None:
        return 'no PostgreSQL binaries: pip install -r requirements-fleet.txt (pgserver)'
    return ''


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


def _server_user() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(['useradd', '--system', '--no-create-home', '--shell', '/usr/sbin/nologin',
                        SERVER_USER], check=True, capture_output=True)
        return pwd.getpwnam(SERVER_USER)


def _open_to_others(path: Path) -> bool:
    """Whether a user who is neither owner nor group can reach ``path`` (every directory up)."""
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in (path, *path.parents))


def _reachable_install(bin_dir: Path) -> Path:
    """``bin_dir``, or a copy of its installation the server user can reach.

    The server runs as another user under root, and the checkout (so the venv holding
    pgserver) may sit in a directory only root can enter (``mktemp -d`` makes 0700 ones):
    the installation (34 MB and its libraries) is then copied once into the system temp dir.
    """
    if _open_to_others(bin_dir):
        return bin_dir
    # The wheel's binaries find their libraries through an RPATH relative to themselves
    # ($ORIGIN/../../../pgserver.libs): the copy keeps that layout.
    site = bin_dir.parents[2]
    parts = [bin_dir.parent.relative_to(site), Path('pgserver.libs')]
    tag = hashlib.sha256(f'{site}:{bin_dir.stat().st_mtime_ns}'.encode()).hexdigest()[:12]
    target = Path(tempfile.gettempdir()) / f'brainmem-pginstall-{tag}'
    wanted = target / parts[0] / 'bin'
    if not (wanted / 'postgres').is_file():
        staging = Path(tempfile.mkdtemp(prefix='brainmem-pginstall-'))
        for part in parts:
            if (site / part).is_dir():
                shutil.copytree(site / part, staging / 'copy' / part, symlinks=True)
        for root, dirs, _ in os.walk(staging):
            for d in (root, *(os.path.join(root, x) for x in dirs)):
                os.chmod(d, 0o755)
        try:
            os.rename(staging / 'copy', target)
        except OSError:
            if not (wanted / 'postgres').is_file():  # not a concurrent copy that won
                raise
        shutil.rmtree(staging, ignore_errors=True)
    return wanted


class LocalPostgres:
    """initdb + postgres in a private directory; stopped (and removed) on exit."""

    def __init__(self, base: Path | None = None, *, port: int | None = None,
                 ssl_cert: Path | None = None, ssl_key: Path | None = None) -> None:
        bin_dir = server_bin_dir()
        if bin_dir is None:
            raise LocalServerError(missing_reason())
        self.port = port or free_port()
        self._user = _server_user()
        self.bin_dir = bin_dir if self._user is None else _reachable_install(bin_dir)
        # The server user must reach its directory: under root, pytest's 0700 tmp dirs
        # are closed to it, so the cluster gets a directory of its own.
        self._own_base = base is None or self._user is not None
        self.base = Path(tempfile.mkdtemp(prefix='brainmem-pg-')) if self._own_base else Path(base)  # type: ignore[arg-type]
        self.data = self.base / 'data'
        self.log = self.base / 'server.log'
        self._ssl = (ssl_cert, ssl_key) if ssl_cert and ssl_key else None
        self._proc: subprocess.Popen[bytes] | None = None
        if self._user is not None:
            os.chown(self.base, self._user.pw_uid, self._user.pw_gid)
            os.chmod(self.base, 0o700)

    # -- lifecycle -------------------------------------------------------------------

    def _run(self, args: list[str]) -> None:
        kwargs = {} if self._user is None else {'user': self._user.pw_uid, 'group': self._user.pw_gid}
        done = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
        if done.returncode != 0:
            msg = f'{Path(args[0]).name} failed ({done.returncode}): {done.stderr.strip()[-2000:]}'
            raise LocalServerError(msg)

    def init(self) -> None:
        """Create the cluster once (idempotent)."""
        if (self.data / 'PG_VERSION').exists():
            return
        self._run([str(self.bin_dir / 'initdb'), '-D', str(self.data), '-U', ADMIN_USER,
                   '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-sync'])
        if self._ssl is not None:
            for src, name in zip(self._ssl, ('server.crt', 'server.key'), strict=True):
                dst = self.data / name
                shutil.copyfile(src, dst)
                os.chmod(dst, 0o600)
                if self._user is not None:
                    os.chown(dst, self._user.pw_uid, self._user.pw_gid)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        self.init()
        args = [str(self.bin_dir / 'postgres'), '-D', str(self.data), '-p', str(self.port),
                '-h', '127.0.0.1', '-k', str(self.data), '-c', 'fsync=off',
                '-c', 'max_connections=100', '-c', 'shared_buffers=64MB']
        if self._ssl is not None:
            args += ['-c', 'ssl=on']
        kwargs = {} if self._user is None else {'user': self._user.pw_uid, 'group': self._user.pw_gid}
        with open(self.log, 'ab') as log:
            self._proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,  # type: ignore[call-overload]
                                          start_new_session=True, **kwargs)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                msg = f'postgres exited at start ({self._proc.returncode}): {self.log_tail()}'
                raise LocalServerError(msg)
            if self._accepting():
                return
            time.sleep(0.05)
        self.kill()
        msg = f'postgres did not start within {_START_TIMEOUT_S:.0f} s: {self.log_tail()}'
        raise LocalServerError(msg)

    def _accepting(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.admin_conninfo(), connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def stop(self) -> None:
        """Fast shutdown (SIGINT to the postmaster); no-op when not running."""
        self._signal(signal.SIGINT)

    def kill(self) -> None:
        """The server dies at once (SIGKILL to its whole process group)."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)
        self._proc = None
        # A killed postmaster leaves its pid file and shared memory: the next start
        # recovers from the WAL as after a power cut.
        pid_file = self.data / 'postmaster.pid'
        if pid_file.exists():
            pid_file.unlink()

    def _signal(self, sig: signal.Signals) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            self._proc = None
            return
        proc.send_signal(sig)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            self.kill()
        self._proc = None

    @property
    def running(self) -> bool:
        """True while the postmaster process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def cleanup(self) -> None:
        """Stop the server; remove its directory when this object created it."""
        self.stop()
        if self._own_base:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.cleanup()

    # -- addresses -------------------------------------------------------------------

    def admin_conninfo(self, dbname: str = 'postgres') -> str:
        """Superuser over the Unix socket (trust: only local processes reach it)."""
        return f'host={self.data} port={self.port} user={ADMIN_USER} dbname={dbname}'

    def robot_conninfo(self, dbname: str) -> str:
        """What a robot's ``fleet.dsn`` holds: TCP, no user or password (those come apart)."""
        return f'host=127.0.0.1 port={self.port} dbname={dbname}'

    def create_database(self, name: str) -> None:
        """CREATE DATABASE ``name`` (no-op when it exists)."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.admin_conninfo(), autocommit=True) as conn:
            exists = conn.execute('SELECT 1 FROM pg_database WHERE datname = %s', (name,)).fetchone()
            if exists is None:
                conn.execute(sql.SQL('CREATE DATABASE {}').format(sql.Identifier(name)))

    def log_tail(self, n: int = 2000) -> str:
        """The end of the server log."""
        try:
            return self.log.read_text(errors='replace')[-n:]
        except OSError:
            return ''


def setup_fleet(pg: LocalPostgres, dbname: str, robots: Sequence[str], *, fleet_id: str,
                secrets_dir: Path, dim: int, **options: Any) -> dict[str, FleetConfig]:
    """A migrated fleet database with one role per robot; each robot's FleetConfig.

    Each robot's password is random and written to ``secrets_dir/<robot>.password``
    (mode 0600), which its config names: what an operator does for a real fleet.
    """
    import psycopg

    from brainmem_ros.fleet.config import FleetConfig
    from brainmem_ros.fleet.credentials import write_password
    from brainmem_ros.fleet.schema import migrate, provision_robot

    pg.create_database(dbname)
    secrets_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    options = {'sslmode': 'disable', 'dsn': pg.robot_conninfo(dbname), **options}
    configs: dict[str, FleetConfig] = {}
    with psycopg.connect(pg.admin_conninfo(dbname), autocommit=True) as conn:
        migrate(conn, dim=dim)
        for robot in robots:
            password = secrets.token_urlsafe(24)
            provision_robot(conn, robot, fleet_id=fleet_id, password=password)
            cred = write_password(secrets_dir / f'{robot}.password', password)
            configs[robot] = FleetConfig(enabled=True, robot_id=robot, credentials_file=str(cred), **options)
    return configs
