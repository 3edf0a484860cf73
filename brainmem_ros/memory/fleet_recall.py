"""The seam between a robot's memory and an optional fleet tier.

The core never imports the fleet: :class:`BrainMem` accepts any object with the
:class:`FleetRecall` shape (``BrainMem.open(path, fleet=...)``; the fleet tier's
``FleetSync`` is one, and binds itself at ``attach``) and hands it
``retrieve(..., scope='fleet')``. Without one, a fleet query answers the local
results, flagged ``fleet_reached=False`` with a note.

>>> hits = mem.retrieve('is the lift working?', scope='fleet')      # doctest: +SKIP
>>> hits.fleet_reached, hits.robot_ids[0], hits.cached[0]           # doctest: +SKIP
(True, 'robot1', False)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from brainmem_ros.errors import InvalidInputError
from brainmem_ros.memory.types import ScoredMemory

SCOPES = ('local', 'fleet')


class ScopedResults(list[ScoredMemory]):
    """Results of a fleet-scope retrieve: a list of memories, each with where it comes from.

    ``robot_ids[i]`` is the source robot of ``self[i]`` ('' for this robot's own),
    ``shared_at[i]`` when its owner last sent it (POSIX seconds, 0 for own) and
    ``cached[i]`` whether it came from the local fleet cache (server unreachable).
    A fleet memory's ``unit.id`` is its id on the source robot.
    """

    def __init__(self, memories: Iterable[ScoredMemory] = (), *, scope: str = 'fleet',
                 robot_ids: Iterable[str] | None = None, shared_at: Iterable[float] | None = None,
                 cached: Iterable[bool] | None = None, fleet_reached: bool = False,
                 from_cache: bool = False, note: str = '') -> None:
        super().__init__(memories)
        n = len(self)
        self.scope = scope
        self.robot_ids = list(robot_ids) if robot_ids is not None else [''] * n
        self.shared_at = list(shared_at) if shared_at is not None else [0.0] * n
        self.cached = list(cached) if cached is not None else [False] * n
        if not len(self.robot_ids) == len(self.shared_at) == len(self.cached) == n:
            msg = 'robot_ids, shared_at and cached must have one entry per memory'
            raise ValueError(msg)
        self.fleet_reached = fleet_reached  # False: the server was not asked successfully
        self.from_cache = from_cache  # True: the fleet part comes from the local cache
        self.note = note  # '' or why the fleet part is missing or cached


@runtime_checkable
class FleetRecall(Protocol):
    """What BrainMem needs of a fleet tier: recall merged with the fleet's memories."""

    def retrieve_fleet(self, query: str, **kwargs: Any) -> ScopedResults:
        """Local recall (keyword arguments of ``BrainMem.retrieve``) merged with the fleet's."""
        ...


def retrieve_scoped(fleet: FleetRecall | None, local: Any, scope: str, query: str,
                    kwargs: dict[str, Any]) -> ScopedResults:
    """``BrainMem.retrieve`` for a scope other than 'local'; ``local`` runs local recall."""
    if scope not in SCOPES:
        msg = f'scope must be one of: {", ".join(SCOPES)}, got {scope!r}'
        raise InvalidInputError(msg)
    if fleet is None:
        return ScopedResults(local(query, **kwargs), scope=scope, fleet_reached=False,
                             note='no fleet configured: local results only')
    return fleet.retrieve_fleet(query, **kwargs)
