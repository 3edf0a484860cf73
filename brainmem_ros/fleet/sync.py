"""FleetSync: a robot's link to its fleet, beside (never inside) its own memory.

The robot's SQLite stays the source of truth; Store and Retrieve never wait on the
fleet. One background thread:

1. runs the sharing policy over units it has not looked at yet (a mark in SQLite,
   so a crash between a Store and the policy loses nothing);
2. drains the outbox in batches: upsert on the server, then drop what the server
   acknowledged (at-least-once; the server's upsert makes a resend harmless);
3. sends queued rewards for other robots' units, and applies the rewards other
   robots gave to this robot's units (cursor and reinforcement in one transaction).

While the server is down the thread backs off (up to ``retry_max_s``) and the outbox
keeps what is waiting, bounded by ``outbox_max``.

>>> fleet = FleetSync(FleetConfig(enabled=True, robot_id='r1', dsn='host=...'))  # doctest: +SKIP
>>> mem = BrainMem.open(path, on_event=fleet.observe)                          # doctest: +SKIP
>>> fleet.attach(mem)                                                          # doctest: +SKIP
>>> fleet.retrieve('is the lift working?', scope='fleet').results              # doctest: +SKIP
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from brainmem_ros.errors import BrainMemError, InvalidInputError, StoreError
from brainmem_ros.fleet.cache_store import CacheStore
from brainmem_ros.fleet.config import FleetConfig
from brainmem_ros.fleet.credentials import read_password
from brainmem_ros.fleet.errors import FleetError, FleetUnavailableError
from brainmem_ros.fleet.outbox_store import OutboxStore, Pending
from brainmem_ros.fleet.pg_store import FleetClient, Reinforcement
from brainmem_ros.fleet.policy import share_reason
from brainmem_ros.fleet.recall import FleetRecaller
from brainmem_ros.fleet.rows import cached_unit, to_row
from brainmem_ros.memory.brainmem import BrainMem
from brainmem_ros.memory.types import MemoryEvent

_log = logging.getLogger(__name__)
# Events after which a unit's shared state (or the policy's verdict) may have changed.
_CHANGE_EVENTS = frozenset({'merged', 'enriched', 'reinforced', 'marginalized', 'restored', 'protected',
                            'unprotected', 'superseded'})
_POLICY_SCAN = 2000
# Each poll re-reads this much before its cursor (a transaction may commit after a later one).
_LOOKBACK_S = 5.0


@dataclass(frozen=True)
class FleetStats:
    """What Stats reports of the fleet tier."""

    enabled: bool
    robot_id: str
    connected: bool
    shared: int
    pending: int
    pending_reinforcements: int
    sent: int  # units acknowledged by the server since start
    received_reinforcements: int
    refused: int  # shares refused because the outbox was full
    errors: int
    last_sync: float  # POSIX seconds of the last successful drain (0 = never)
    last_error: str
    cached: int = 0  # other robots' units in the local cache
    cache_synced: float = 0.0  # POSIX seconds of the last poll that reached the server


@dataclass(frozen=True)
class SyncReport:
    """What one :meth:`FleetSync.sync_once` did."""

    sent: int
    reinforcements_sent: int
    reinforcements_applied: int
    policy_shared: int
    received: int = 0  # other robots' units put in the local cache


def client_from_config(config: FleetConfig) -> FleetClient:
    """A pool for ``config`` (password from its credentials file)."""
    password = read_password(config.credentials_file) if config.credentials_file else ''
    ssl = {'sslmode': config.sslmode, 'sslrootcert': config.sslrootcert, 'sslcert': config.sslcert,
           'sslkey': config.sslkey}
    return FleetClient(config.dsn, user=config.role, password=password, robot_id=config.robot_id,
                       connect_timeout_s=config.connect_timeout_s,
                       statement_timeout_ms=config.statement_timeout_ms, ssl=ssl)


class FleetSync(FleetRecaller):
    """Shares a robot's memories with its fleet and recalls the fleet's."""

    def __init__(self, config: FleetConfig, *, client: FleetClient | None = None,
                 fleet_id: str = '', clock: Callable[[], float] = time.time,
                 after_send: Callable[[Sequence[Pending]], None] | None = None) -> None:
        self.config = config
        self.clock = clock
        self.fleet_id = fleet_id
        self._client = client
        self._after_send = after_send  # test hook: runs between server commit and local ack
        self.mem: BrainMem | None = None
        self.outbox: OutboxStore | None = None
        self.cache: CacheStore | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sync_lock = threading.Lock()
        self._connected = False
        self._sent = self._received = self._refused = self._errors = 0
        self._last_sync = 0.0
        self._last_error = ''

    @property
    def client(self) -> FleetClient:
        """The server connection pool (made on first use)."""
        if self._client is None:
            self._client = client_from_config(self.config)
        return self._client

    # -- lifecycle -------------------------------------------------------------------

    def attach(self, mem: BrainMem, *, start: bool = True) -> None:
        """Bind to the robot's memory, create the outbox tables, start the thread."""
        self.mem = mem
        if mem.fleet is None:
            mem.fleet = self  # BrainMem.retrieve(..., scope='fleet') goes through this link
        self.outbox = OutboxStore(mem.store_db, max_pending=self.config.outbox_max)
        if self.config.cache_max > 0:
            self.cache = CacheStore(mem.store_db, max_units=self.config.cache_max)
        # The fleet id is asked from the server at the first sync: opening never waits on it.
        if start:
            self._thread = threading.Thread(target=self._run, name='brainmem-fleet', daemon=True)
            self._thread.start()

    def _fleet_id(self) -> str:
        try:
            return self.client.my_fleet_id()
        except FleetError as exc:
            self._failed(exc)
            return ''

    def close(self) -> None:
        """Stop the thread (after its current step) and close the pool."""
        if self.mem is not None and self.mem.fleet is self:
            self.mem.fleet = None
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None
        if self._client is not None:
            self._client.close()

    def _run(self) -> None:
        pause = self.config.sync_period_s
        while not self._stop.is_set():
            try:
                self.sync_once()
                pause = self.config.sync_period_s
            except FleetError as exc:
                self._failed(exc)
                pause = min(self.config.retry_max_s, max(pause * 2, self.config.sync_period_s))
            except StoreError as exc:
                self._failed(exc)
            except Exception as exc:  # noqa: BLE001 - the thread must outlive one bad step
                # A bug or a bad row (a cache row that does not decode): ending the thread
                # stopped sharing and rewards until a restart, with Stats showing no error.
                _log.exception('fleet: sync step failed')
                self._failed(FleetError(f'sync step failed: {type(exc).__name__}: {exc}'))
                pause = min(self.config.retry_max_s, max(pause * 2, self.config.sync_period_s))
            self._wake.wait(pause)
            self._wake.clear()

    def _failed(self, exc: BrainMemError) -> None:
        self._errors += 1
        if isinstance(exc, FleetUnavailableError):
            self._connected = False
        if str(exc) != self._last_error:
            _log.warning('fleet: %s', exc)
        self._last_error = str(exc)

    def wake(self) -> None:
        """Sync now rather than at the next period."""
        self._wake.set()

    # -- what is shared --------------------------------------------------------------

    def _parts(self) -> tuple[BrainMem, OutboxStore]:
        if self.mem is None or self.outbox is None:
            msg = 'fleet sync is not attached to a memory'
            raise FleetError(msg)
        return self.mem, self.outbox

    def observe(self, event: MemoryEvent) -> None:
        """BrainMem's event hook: queue what changed among shared units."""
        if self.mem is None or self.outbox is None:
            return
        try:
            if event.kind == 'deleted':
                self.outbox.unshare(event.ids, now=self.clock())
            elif event.kind in _CHANGE_EVENTS:
                self._evaluate(event.ids)
        except StoreError as exc:
            self._failed(exc)
        self._wake.set()

    def _evaluate(self, ids: Sequence[int]) -> None:
        mem, outbox = self._parts()
        units = mem.store_db.get_units(ids)
        shared = outbox.shared_among(list(units))
        fresh = [(u.id, r) for u in units.values() if u.id not in shared
                 and (r := share_reason(u, self.config))]
        if fresh:
            self._refused += outbox.share(fresh, now=self.clock())
        outbox.changed(sorted(shared), now=self.clock())

    def share(self, ids: Sequence[int]) -> int:
        """Share units explicitly (the ``share`` flag of Store); returns how many were queued."""
        mem, outbox = self._parts()
        units = mem.get(list(ids))
        refused = outbox.share([(u.id, share_reason(u, self.config, explicit=True)) for u in units],
                               now=self.clock(), explicit=True)
        self._refused += refused
        self._wake.set()
        return len(units) - refused

    def unshare(self, ids: Sequence[int]) -> int:
        """Take units back from the fleet; returns how many were shared.

        The server drops their rows at the next sync and the other robots drop them
        from their caches at their next poll; the policy does not share them again
        when they change (an explicit :meth:`share` does).
        """
        _, outbox = self._parts()
        taken = outbox.unshare(list(ids), now=self.clock(), withhold=True)
        self._wake.set()
        return taken

    def _apply_policy(self) -> int:
        """Look at units the policy has not seen; returns how many it shared."""
        mem, outbox = self._parts()
        mark = outbox.policy_mark()
        shared = 0
        while ids := outbox.unit_ids_after(mark, limit=_POLICY_SCAN):
            units = mem.store_db.get_units(ids)
            reasons = [(u.id, r) for u in units.values() if (r := share_reason(u, self.config))]
            self._refused += outbox.share(reasons, now=self.clock(), mark=ids[-1])
            shared += len(reasons)
            mark = ids[-1]
        return shared

    # -- draining --------------------------------------------------------------------

    def sync_once(self) -> SyncReport:
        """Policy, outbox drain, rewards both ways; FleetUnavailableError when the server is down."""
        with self._sync_lock:
            shared = self._apply_policy()
            sent = self._drain()
            rewards_out = self._send_reinforcements()
            applied = self._apply_reinforcements()
            received = self._poll()
            self._connected = True
            self._last_sync = self.clock()
            return SyncReport(sent, rewards_out, applied, shared, received)

    def _drain(self) -> int:
        mem, outbox = self._parts()
        total = 0
        if not self.fleet_id:
            self.fleet_id = self._fleet_id()
            if not self.fleet_id:
                msg = self._last_error or f'robot {self.config.robot_id} is not provisioned in the fleet'
                raise FleetUnavailableError(msg)
        while batch := outbox.pending(limit=self.config.batch_size):
            upserts = [p for p in batch if p.op == 'upsert']
            units = mem.store_db.get_units([p.unit_id for p in upserts])
            vectors = mem.store_db.vectors(list(units))
            superseded = mem.store_db.superseded_at(list(units))
            rows = [to_row(units[p.unit_id], p.version, vectors[p.unit_id],
                           superseded_at=superseded.get(p.unit_id))
                    for p in upserts if p.unit_id in units and p.unit_id in vectors]
            gone = [p.unit_id for p in batch if p.op == 'unshare' or p.unit_id not in units]
            try:
                self.client.upsert_units(rows, fleet_id=self.fleet_id)
                self.client.unshare_units(gone, fleet_id=self.fleet_id)
            except FleetError:
                outbox.attempted(batch)
                raise
            if self._after_send is not None:
                self._after_send(batch)
            outbox.sent(batch)
            total += len(batch)
            self._sent += len(batch)
        return total

    def _send_reinforcements(self) -> int:
        _, outbox = self._parts()
        total = 0
        while batch := outbox.pending_reinforcements(limit=self.config.batch_size):
            self.client.send_reinforcements(batch, fleet_id=self.fleet_id)
            outbox.reinforcements_sent([seq for seq, _ in batch])
            total += len(batch)
        return total

    def _apply_reinforcements(self) -> int:
        mem, outbox = self._parts()
        applied = 0
        while items := self.client.reinforcements_for_me(after_id=outbox.reinforce_cursor(),
                                                         limit=self.config.batch_size):
            for item in items:
                # The reward and the cursor past it commit together: applied once, even
                # across a crash. The request first, then the memory's lock, as BrainMem
                # itself takes them: taken inside the locks, the request waited (0.5 s) for
                # a background step that was itself waiting for those locks.
                with mem.store_db.request(), mem._lock, mem.store_db.atomic():
                    try:
                        mem.reinforce([item.unit_id], reward=item.reward,
                                      note=f'fleet: {item.by_robot} {item.note}'.strip())
                    except InvalidInputError as exc:
                        _log.info('fleet reward for unit %d skipped: %s', item.unit_id, exc)
                    outbox.set_reinforce_cursor(item.id)
                applied += 1
                self._received += 1
        return applied

    def _poll(self) -> int:
        """The subscription: other robots' shared units changed since the cursor, into the cache."""
        if self.cache is None:
            return 0
        # Records of units taken back first: a unit taken back after them has no row any
        # more, so the poll below cannot bring it back; one taken back later is in the
        # next poll's records.
        self._poll_unshared()
        received = 0
        after = self.cache.cursor()
        lookback = _LOOKBACK_S
        while True:
            rows = self.client.changes_after(after, fleet_id=self.fleet_id, limit=self.config.batch_size,
                                             lookback_s=lookback, newest=self.config.cache_max)
            if not rows:
                self.cache.put([], cursor=None, now=self.clock())
                break
            units = [cached_unit(r) for r in rows]
            after = (str(rows[-1][-1]), units[-1].robot_id, units[-1].unit_id)
            self.cache.put(units, cursor=after, now=self.clock())
            received += len(units)
            lookback = 0.0
            if len(rows) < self.config.batch_size:
                break
        return received

    def _poll_unshared(self) -> int:
        """Drop from the cache what other robots stopped sharing since the last poll."""
        assert self.cache is not None
        dropped = 0
        while records := self.client.unshared_after(self.cache.unshared_cursor(), fleet_id=self.fleet_id,
                                                    limit=self.config.batch_size):
            dropped += self.cache.forget_unshared(records)
            if len(records) < self.config.batch_size:
                break
        return dropped

    # -- reinforcing and recalling ----------------------------------------------------

    def reinforce(self, robot_id: str, ids: Sequence[int], *, reward: float, note: str = '') -> int:
        """Reward units; another robot's are queued for it (it applies them to its memory)."""
        mem, outbox = self._parts()
        if not robot_id or robot_id == self.config.robot_id:
            return len(mem.reinforce(list(ids), reward=reward, note=note))
        if not -1.0 <= reward <= 1.0:
            msg = f'reward must be within -1..1, got {reward!r}'
            raise InvalidInputError(msg)
        for uid in ids:
            outbox.queue_reinforcement(Reinforcement(0, robot_id, int(uid), self.config.robot_id,
                                                     float(reward), note, self.clock()))
        self._wake.set()
        return len(ids)

    def stats(self) -> FleetStats:
        """Outbox sizes, counters and the last error."""
        counts = self.outbox.counts() if self.outbox is not None else None
        cache = self.cache.counts() if self.cache is not None else None
        return FleetStats(
            enabled=True, robot_id=self.config.robot_id, connected=self._connected,
            shared=counts.shared if counts else 0, pending=counts.pending if counts else 0,
            pending_reinforcements=counts.pending_reinforcements if counts else 0, sent=self._sent,
            received_reinforcements=self._received, refused=self._refused, errors=self._errors,
            last_sync=self._last_sync, last_error=self._last_error,
            cached=cache.units if cache else 0, cache_synced=cache.synced if cache else 0.0)
