"""The store's file and connection: opening, permissions, migration, transactions, meta.

One connection guarded by one re-entrant lock: the node serves callbacks from
several threads, and SQLite allows a single writer anyway. Every write happens
inside :meth:`Connection.atomic`, so a unit acknowledged to a caller is on disk;
storage layers with tables of their own in this file read them inside
:meth:`Connection.reading`.

Faults surface as :class:`StoreError` with SQLite's reason (disk full, read-only
file system, malformed file), never as a raw ``sqlite3`` exception. A data
directory that cannot be written (read-only mount) still opens, read-only: recall
keeps working and every write is refused with a message.
"""

from __future__ import annotations

import logging
import os
import secrets
import sqlite3
import stat
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from brainmem_ros.errors import SchemaVersionError, StoreError
from brainmem_ros.memory.config import StoreConfig
from brainmem_ros.memory.store.gate import RequestGate
from brainmem_ros.memory.store.schema import MIGRATIONS, SCHEMA_VERSION
from brainmem_ros.memory.store.sql import split_sql

_PRIVATE = 0o600
# Background work waits for this long a spell with no request under way and no read
# (wait_quiet): a caller's next call of a burst usually comes sooner.
QUIET_S = 0.005
_log = logging.getLogger(__name__)

def _make_private(path: Path) -> None:
    # A file copied in with a looser mode (or left by an older version) is
    # tightened: memories can be private (who lives where, what they said).
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if mode & 0o077:
        try:
            os.chmod(path, _PRIVATE)
        except PermissionError as exc:
            _log.warning('cannot make %s private (mode %o): %s', path, mode, exc.strerror)


def _uri(path: Path, **params: str) -> str:
    quoted = str(path.resolve()).replace('%', '%25').replace('?', '%3f').replace('#', '%23')
    return f'file:{quoted}?' + '&'.join(f'{k}={v}' for k, v in params.items())


class Connection:
    """One SQLite file (WAL) behind one lock: the base the store's parts build on."""

    def __init__(self, path: Path, *, config: StoreConfig | None = None) -> None:
        self.path = Path(path)
        self.config = config or StoreConfig()
        self._lock = threading.RLock()
        self._depth = 0
        #: Requests under way and background turns (request(), background_turn()).
        self.gate = RequestGate()
        self._background = False  # the transaction under way is background work
        self._reader_uri = _uri(self.path, mode='ro')  # for reader(): never writes
        #: Why the store refuses writes ('' when it is writable).
        self.read_only_reason = ''
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            msg = f'cannot create the data directory {self.path.parent}: {exc.strerror}'
            raise StoreError(msg) from None
        if not os.access(self.path.parent, os.W_OK) or \
                (self.path.exists() and not os.access(self.path, os.W_OK)):
            self._open_read_only()
            return
        try:
            if not self.path.exists():
                # Create the file 0600 ourselves: sqlite would use the umask. Its
                # -wal and -shm files inherit the database file's mode.
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, _PRIVATE))
            for suffix in ('', '-wal', '-shm'):
                _make_private(Path(f'{self.path}{suffix}'))
        except OSError as exc:
            msg = f'cannot create memory store {self.path}: {exc.strerror}'
            raise StoreError(msg) from None
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute(f'PRAGMA busy_timeout = {int(self.config.busy_timeout_ms)}')
            mode = self._db.execute('PRAGMA journal_mode = WAL').fetchone()[0]
            self._db.execute(f'PRAGMA synchronous = {self.config.synchronous}')
            self._db.execute('PRAGMA foreign_keys = ON')
            self._db.execute('PRAGMA cache_size = -65536')
        except sqlite3.Error as exc:
            msg = f'cannot open memory store {self.path}: {exc}'
            raise StoreError(msg) from None
        if mode.lower() != 'wal':
            msg = f'cannot put {self.path} in WAL mode (got {mode})'
            raise StoreError(msg)
        self._migrate()

    def _open_read_only(self) -> None:
        if not self.path.exists():
            msg = f'cannot create memory store {self.path}: the data directory is not writable'
            raise StoreError(msg)
        self.read_only_reason = f'the data directory {self.path.parent} is not writable'
        wal = Path(f'{self.path}-wal')
        # Without a WAL holding commits, the main file is the whole truth and can be
        # read as immutable (SQLite could not create its -shm file here anyway).
        # With one, SQLite reads it read-only; it never skips a committed unit.
        pending = wal.exists() and wal.stat().st_size > 0
        uri = _uri(self.path, mode='ro') if pending else _uri(self.path, mode='ro', immutable='1')
        self._reader_uri = uri
        try:
            self._db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            self._db.execute(f'PRAGMA busy_timeout = {int(self.config.busy_timeout_ms)}')
            version = self._db.execute('PRAGMA user_version').fetchone()[0]
        except sqlite3.Error as exc:
            msg = f'cannot open memory store {self.path} read-only: {exc}'
            if pending and not Path(f'{self.path}-shm').exists():
                msg += ('; its -wal holds commits that SQLite cannot read without a -shm file, '
                        'which a read-only directory cannot get: mount it writable once to recover')
            raise StoreError(msg) from None
        self._check_version(version)
        if version != SCHEMA_VERSION:
            msg = (f'{self.path} has schema version {version} and needs an upgrade to '
                   f'{SCHEMA_VERSION}, but {self.read_only_reason}')
            raise StoreError(msg)
        _log.warning('memory store %s opened read-only: %s', self.path, self.read_only_reason)

    @property
    def read_only(self) -> bool:
        """True when the store was opened read-only (writes raise StoreError)."""
        return bool(self.read_only_reason)

    # -- lifecycle -------------------------------------------------------------------

    def _check_version(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            msg = (f'{self.path} has schema version {version}, newer than this brainmem '
                   f'({SCHEMA_VERSION}); upgrade brainmem_ros or use another data directory')
            raise SchemaVersionError(msg)

    def _migrate(self) -> None:
        try:
            version = self._db.execute('PRAGMA user_version').fetchone()[0]
        except sqlite3.DatabaseError as exc:
            msg = f'{self.path} is not a readable brainmem database: {exc}'
            raise StoreError(msg) from None
        self._check_version(version)
        with self.atomic():
            for step in range(version, SCHEMA_VERSION):
                for statement in split_sql(MIGRATIONS[step]):
                    self._db.execute(statement)
            if version != SCHEMA_VERSION:
                self._db.execute(f'PRAGMA user_version = {SCHEMA_VERSION}')

    def close(self) -> None:
        """Checkpoint the WAL and close."""
        with self._lock:
            if not self.read_only:
                try:
                    self._db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
                except sqlite3.Error as exc:
                    # A full or read-only disk must not stop a clean close: the
                    # WAL still holds every commit and is replayed on next open.
                    _log.warning('WAL checkpoint of %s failed on close: %s', self.path, exc)
            self._db.close()

    @contextmanager
    def atomic(self, *, durable: bool = True, background: bool = False) -> Iterator[sqlite3.Connection]:
        """One transaction (nested calls join the outer one); rolls back on any error.

        SQLite failures inside the block (disk full, I/O error, read-only file)
        leave as :class:`StoreError`; nothing of the transaction is kept.

        ``durable=False``: no fsync of its own (still atomic; a kill -9 keeps it; the next
        durable commit or checkpoint makes it durable): for writes redone when a power cut
        loses them (access statistics, a consolidation step saved with its progress).
        ``background=True``: not a request's transaction (see :meth:`wait_quiet`).
        """
        with self._lock:
            outermost = not self._depth
            if outermost:
                if not background:
                    self.gate.used()
                # Reads inside a background transaction are not a request's either.
                self._background = background
            relaxed = (outermost and not durable and not self.read_only
                       and self.config.synchronous.upper() in ('FULL', 'EXTRA'))
            if relaxed:
                self._db.execute('PRAGMA synchronous = NORMAL')
            try:
                with self._transaction() as db:
                    yield db
            finally:
                if relaxed:
                    self._db.execute(f'PRAGMA synchronous = {self.config.synchronous}')

    def request(self) -> AbstractContextManager[None]:
        """Mark a request (a Retrieve, a Store's write) while the block runs: background
        steps wait for its end (:mod:`brainmem_ros.memory.store.gate`)."""
        return self.gate.request()

    def wait_quiet(self, limit_s: float, *, quiet_s: float = QUIET_S) -> None:
        """Wait (at most ``limit_s``) until no request is under way and nobody has used the
        store for ``quiet_s``.

        For background work that runs outside the store's lock (an index save). Call it
        without holding any lock a request needs.
        """
        self.gate.wait_quiet(limit_s, quiet_s=quiet_s)

    def background_turn(self, limit_s: float, *, quiet_s: float = QUIET_S) -> AbstractContextManager[None]:
        """A background step (a consolidation step, the access write) between requests:
        after a quiet spell (waited for at most ``limit_s``) or in the next gap between two
        requests. Call it without holding any lock a request needs.
        """
        return self.gate.turn(limit_s, quiet_s=quiet_s)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self._db
                finally:
                    self._depth -= 1
                return
            if self.read_only:
                msg = f'cannot write to memory store {self.path}: {self.read_only_reason}'
                raise StoreError(msg)
            try:
                self._db.execute('BEGIN IMMEDIATE')
            except sqlite3.Error as exc:
                msg = f'cannot write to memory store: {exc}'
                raise StoreError(msg) from None
            self._depth = 1
            try:
                try:
                    yield self._db
                except sqlite3.Error as exc:
                    self._depth = 0
                    self._rollback()
                    msg = f'cannot write to memory store: {exc}'
                    raise StoreError(msg) from None
                except BaseException:
                    self._depth = 0
                    self._rollback()
                    raise
                self._depth = 0
                try:
                    self._db.execute('COMMIT')
                except sqlite3.Error as exc:
                    self._rollback()
                    msg = f'cannot write to memory store: {exc}'
                    raise StoreError(msg) from None
            finally:
                # Committed or rolled back, still under the lock: edge listeners are
                # up to date before any other thread can read the store.
                self._transaction_ended()

    def _transaction_ended(self) -> None:
        """Called under the lock when the outermost transaction has ended (a hook)."""

    @property
    def lock(self) -> threading.RLock:
        """The store's lock: held, no other thread commits (or reads) in between."""
        return self._lock

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`atomic` on the thread that holds the lock."""
        with self._lock:
            return self._depth > 0

    def _rollback(self) -> None:
        # SQLite may already have rolled back by itself (disk full, I/O error);
        # a second ROLLBACK would raise and hide the original error.
        if self._db.in_transaction:
            try:
                self._db.execute('ROLLBACK')
            except sqlite3.Error as exc:
                _log.warning('rollback of %s failed: %s', self.path, exc)

    @contextmanager
    def reader(self) -> Iterator[sqlite3.Connection]:
        """A second connection, read-only, in one read transaction: a snapshot of the store.

        For long reads on another thread (the in-memory graph's bulk read): they take
        no lock, hold up no writer (WAL), and see nothing committed after their first
        statement. SQLite failures leave as :class:`StoreError`.
        """
        try:
            db = sqlite3.connect(self._reader_uri, uri=True, isolation_level=None,
                                 check_same_thread=False)
        except sqlite3.Error as exc:
            msg = f'cannot open a reader of memory store {self.path}: {exc}'
            raise StoreError(msg) from None
        try:
            db.execute(f'PRAGMA busy_timeout = {int(self.config.busy_timeout_ms)}')
            db.execute('BEGIN')
            yield db
        except sqlite3.Error as exc:
            msg = f'memory store read failed: {exc}'
            raise StoreError(msg) from None
        finally:
            db.close()

    def integrity_problems(self, *, quick: bool = False) -> list[str]:
        """What ``PRAGMA integrity_check`` (or ``quick_check``) finds; [] when intact."""
        pragma = 'quick_check' if quick else 'integrity_check'
        rows = self._query(f'PRAGMA {pragma}')
        found = [str(r[0]) for r in rows]
        return [] if found == ['ok'] else found

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of one read statement, under the lock (for this package's modules only)."""
        with self._lock:
            if not (self._depth and self._background):
                self.gate.used()
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                msg = f'memory store read failed: {exc}'
                raise StoreError(msg) from None

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The store's own connection for reads, under its lock: the read side of :meth:`atomic`.

        For storage layers that keep tables of their own in this file (the fleet's
        outbox and cache); the memory core calls named methods. No other thread
        commits while the block runs; inside a transaction the block sees its writes.
        Rows must be fetched inside the block. Writes are refused there
        (``PRAGMA query_only``), and SQLite failures leave as :class:`StoreError`.
        """
        with self._lock:
            try:
                guard = not self._db.execute('PRAGMA query_only').fetchone()[0]
                if guard:
                    self._db.execute('PRAGMA query_only = ON')
            except sqlite3.Error as exc:
                msg = f'memory store read failed: {exc}'
                raise StoreError(msg) from None
            try:
                yield self._db
            except sqlite3.Error as exc:
                msg = f'memory store read failed: {exc}'
                raise StoreError(msg) from None
            finally:
                if guard:
                    self._db.execute('PRAGMA query_only = OFF')

    # -- meta ------------------------------------------------------------------------

    def get_meta(self, key: str, default: str = '') -> str:
        """A value of the meta table."""
        rows = self._query('SELECT value FROM meta WHERE key = ?', (key,))
        return str(rows[0][0]) if rows else default

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the meta table (inside the current transaction, if any)."""
        with self.atomic() as db:
            db.execute('INSERT INTO meta(key, value) VALUES (?, ?) '
                       'ON CONFLICT(key) DO UPDATE SET value = excluded.value', (key, value))

    def bump_generation(self) -> int:
        """Start a new generation of the hot vector set; the index file records which it reflects.

        For every change of the set but new units (whose ids are above the last one a
        saved file records: an open adds them to it), and for every save of the file.
        A generation is a counter (high bits) plus 32 random bits, so it is never
        reused: not after a lost ``-wal`` turned the counter back, and not by
        another robot's store whose counter happens to be equal. An index file
        therefore matches only a store that holds the commit of its save and, since,
        new units only.
        """
        with self.atomic():
            count = int(self.get_meta('index_generation', '0')) >> 32
            gen = ((count + 1) << 32) | secrets.randbits(32)
            self.set_meta('index_generation', str(gen))
            return gen

    def size_bytes(self) -> int:
        """Bytes on disk of the database and its WAL."""
        total = 0
        for suffix in ('', '-wal', '-shm'):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total

