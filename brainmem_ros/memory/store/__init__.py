"""SQLite store: the source of truth for units, vectors, edges and facts.

Every SQL statement of the memory core is in this package, behind named methods:

* :mod:`.connection` -- opening the file (permissions, read-only mode), migration,
  transactions (:meth:`SqliteStore.atomic`), the meta table;
* :mod:`.schema` -- the schema, written once, and its ordered migrations;
* :mod:`.sql` and :mod:`.codec` -- shared fragments, the one chunking helper, and
  how values are stored (one decoder per kind of row);
* :mod:`.units`, :mod:`.text`, :mod:`.edges`, :mod:`.dynamics` -- the statements over
  units and vectors, full-text search, edges, and consolidation; :mod:`.access` --
  the access statistics of Retrieve, written behind it; :mod:`.checkpoint` -- WAL
  checkpoints, off the commits;
* :mod:`.watch` -- edge change watching: the in-memory graph
  (:mod:`brainmem_ros.memory.adjacency`) is told which units' edges changed after
  every transaction, however the change was made;
* :mod:`.facts` -- the fact layer's claims and timelines; :mod:`.edge_scan` -- the
  bulk read of the edge table the in-memory graph is built from.
"""

from brainmem_ros.memory.store.codec import EdgeScale, UnitHead
from brainmem_ros.memory.store.edges import edge_scale_of
from brainmem_ros.memory.store.sql import STRUCTURAL_KINDS
from brainmem_ros.memory.store.sqlite import SqliteStore
from brainmem_ros.memory.store.watch import EdgeListener

__all__ = ['STRUCTURAL_KINDS', 'EdgeListener', 'EdgeScale', 'SqliteStore', 'UnitHead', 'edge_scale_of']
