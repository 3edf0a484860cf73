"""The fleet tier's options: one validated, typed object (node parameters ``fleet.*``).

Off unless ``enabled`` and a ``dsn`` are set. The password never sits here: it is read
from ``credentials_file`` (:mod:`brainmem_ros.fleet.credentials`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from brainmem_ros.errors import ConfigError
from brainmem_ros.memory.config import coerce

_ROBOT_ID = re.compile(r'^[a-z][a-z0-9_]{0,40}$')
SSL_MODES = ('disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full')


def _opt(default: Any, description: str, bound: tuple[float, float] | None = None) -> Any:
    return field(default=default, metadata={'description': description, 'range': bound})


@dataclass(frozen=True)
class FleetConfig:
    """Where the fleet server is, who this robot is there, and what it shares."""

    enabled: bool = _opt(False, 'share memories with the fleet through PostgreSQL (off: local only)')
    robot_id: str = _opt('', 'this robot\'s id in the fleet: lower-case letters, digits, _ '
                             '(its database role is brainmem_<robot_id>)')
    dsn: str = _opt('', 'libpq connection string of the fleet database without user or password, '
                        'e.g. "host=fleet.example.org port=5432 dbname=brainmem"')
    credentials_file: str = _opt('', 'file holding the database password (first line); must be '
                                     'readable by this user only (mode 0600)')
    sslmode: str = _opt('prefer', 'libpq sslmode: disable | allow | prefer | require | verify-ca | '
                                  'verify-full (production: verify-full)')
    sslrootcert: str = _opt('', 'CA certificate file that signed the server certificate')
    sslcert: str = _opt('', 'client certificate file ("" = password only)')
    sslkey: str = _opt('', 'client key file for sslcert')
    share_state_changes: bool = _opt(False, 'share units that record a state change (facts)')
    share_reflections: bool = _opt(False, 'share reflection units (lessons)')
    share_min_importance: float = _opt(0.0, 'share units of at least this importance (0 = off)',
                                       (0.0, 10.0))
    share_min_strength: float = _opt(0.0, 'share units of at least this strength (0 = off)', (0.0, 2.0))
    share_types: tuple[str, ...] = _opt((), 'unit types always shared, e.g. [outcome]')
    share_episodes: tuple[str, ...] = _opt((), 'episode ids whose units are all shared')
    sync_period_s: float = _opt(2.0, 'outbox drain and fleet poll period', (0.05, 3600.0))
    batch_size: int = _opt(200, 'units sent per server transaction', (1, 10000))
    outbox_max: int = _opt(100000, 'most units waiting to be sent; past it new shares are refused '
                                   'and counted in Stats', (1, 100000000))
    connect_timeout_s: float = _opt(2.0, 'server connection timeout (a fleet Retrieve waits at '
                                         'most about this long before answering locally)', (0.1, 60.0))
    statement_timeout_ms: int = _opt(2000, 'server-side limit of one fleet statement', (10, 600000))
    recall_candidates: int = _opt(50, 'fleet candidates per recall list (vector, full text)', (1, 1000))
    cache_max: int = _opt(10000, 'most fleet units kept in the local cache that answers fleet '
                                 'queries while the server is unreachable (0 = no cache)', (0, 10000000))
    retry_max_s: float = _opt(30.0, 'longest pause between attempts while the server is down',
                              (0.1, 3600.0))

    def __post_init__(self) -> None:
        for f in fields(self):
            bound = f.metadata.get('range')
            value = getattr(self, f.name)
            if bound is not None and (not math.isfinite(value) or not bound[0] <= value <= bound[1]):
                msg = f'fleet.{f.name}={value!r} is out of range [{bound[0]}, {bound[1]}]'
                raise ConfigError(msg)
        if self.sslmode not in SSL_MODES:
            msg = f'fleet.sslmode={self.sslmode!r} must be one of: {", ".join(SSL_MODES)}'
            raise ConfigError(msg)
        if not self.enabled:
            return
        if not _ROBOT_ID.match(self.robot_id):
            msg = (f'fleet.robot_id={self.robot_id!r} must be lower-case letters, digits and _ '
                   '(starting with a letter, at most 41 characters)')
            raise ConfigError(msg)
        if not self.dsn.strip():
            msg = 'fleet.enabled is true but fleet.dsn is empty'
            raise ConfigError(msg)
        if re.search(r'\b(password|user)\s*=', self.dsn):
            msg = 'fleet.dsn must not hold user or password: the role comes from fleet.robot_id, ' \
                  'the password from fleet.credentials_file'
            raise ConfigError(msg)

    @property
    def role(self) -> str:
        """The database role of this robot."""
        return role_of(self.robot_id)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> FleetConfig:
        """Build from option names (without ``fleet.``); unknown keys and bad types are refused."""
        known = {f.name: f for f in fields(cls)}
        base = cls()
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            if key not in known:
                msg = f'unknown fleet option {key!r}'
                raise ConfigError(msg)
            kwargs[key] = _coerce(key, getattr(base, key), value)
        return dataclasses.replace(base, **kwargs)


def role_of(robot_id: str) -> str:
    """``brainmem_<robot_id>``: robot roles never collide with operators' roles."""
    return f'brainmem_{robot_id}'


def describe() -> dict[str, tuple[Any, str, tuple[float, float] | None]]:
    """option → (default, description, range) for every fleet option."""
    default = FleetConfig()
    return {f.name: (getattr(default, f.name), f.metadata['description'], f.metadata.get('range'))
            for f in fields(FleetConfig)}


def _coerce(key: str, current: Any, value: Any) -> Any:
    if isinstance(current, tuple):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            msg = f'fleet.{key} must be a list of strings, got {value!r}'
            raise ConfigError(msg)
        return tuple(v for v in value if v)
    return coerce(f'fleet.{key}', current, value)
