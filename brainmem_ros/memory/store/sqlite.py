"""The store itself: one class made of the parts, each a module of this package."""

from __future__ import annotations

from brainmem_ros.memory.store.access import AccessStats
from brainmem_ros.memory.store.checkpoint import WalCheckpoints
from brainmem_ros.memory.store.dynamics import UnitDynamics
from brainmem_ros.memory.store.edges import EdgeRows
from brainmem_ros.memory.store.text import TextSearch


class SqliteStore(WalCheckpoints, AccessStats, UnitDynamics, TextSearch, EdgeRows):
    """Units, vectors, edges and facts in one SQLite file (WAL).

    :class:`~brainmem_ros.memory.store.connection.Connection` opens the file and runs
    transactions; the parts add the named statements over its tables (units, full-text
    search, edges and their change watching, consolidation, access statistics written
    behind Retrieve, WAL checkpoints on a thread of their own). Facts have their own
    class over the same connection (:class:`~brainmem_ros.memory.store.facts.FactStore`).
    """
