"""The SQL of the fact layer: claims per unit, facts per entity and attribute.

``fact_claims`` holds what each unit states (one row per unit, entity and attribute);
``facts`` the timelines :func:`brainmem_ros.memory.facts.timeline` derives from them.
Claims arriving in time order extend or close the open fact in place; a claim older
than the newest one of its entity and attribute (a late observation) rebuilds that
one timeline from its claims. Facts are derived data: a store can always rebuild
them from its units (:meth:`FactStore.rebuild`, run once after the migration).
"""

from __future__ import annotations

import functools
import math
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from brainmem_ros.memory.discourse import TURNS, told_of
from brainmem_ros.memory.entity_names import labelled
from brainmem_ros.memory.facts import (
    DERIVED_TYPES,
    POSITION,
    Claim,
    Fact,
    claims_of,
    fact_of,
    runs,
    same_value,
    singular,
    value_key,
)
from brainmem_ros.memory.store.codec import decode_pose, pose_json
from brainmem_ros.memory.store.fact_keys import keys_by_name, with_containers
from brainmem_ros.memory.store.sql import chunks, qmarks
from brainmem_ros.memory.store.sqlite import SqliteStore
from brainmem_ros.memory.types import Edge, EdgeKind, MemoryUnit, Pose

REBUILD_KEY = 'facts_rebuild'
# Set once the claims that derived units (reflections) filed before they stopped claiming
# are taken back; a store without it is checked once, on open.
DERIVED_KEY = 'facts_derived_claims_dropped'
_SUPERSEDES_WEIGHT = 0.8
_FACT_COLUMNS = ('id, entity, name, attribute, value, valid_from, valid_until, last_seen, pose, '
                 'source, confidence')
_BATCH = 2000


def _head(key: str) -> str:
    """The word a name is looked up by: its last, or the last before a device's number or
    label ("vacuum 01": vacuum, which "the robot vacuum" holds; "drill dr3", "crate a17").
    Facts filed before this read kept the number as their head, and are found by their full
    name as before."""
    words = key.split()
    while len(words) > 1 and labelled(words[-1]):
        words.pop()
    # (The word before a label is in the plural as written, "pruning shears 1": the head a
    # name asks for is singular.)
    return (singular(words[-1]) if len(words) < len(key.split()) else words[-1]) if words else key


class FactStore:
    """Named fact operations over a :class:`SqliteStore` (its connection and lock)."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store

    # -- writing ---------------------------------------------------------------------

    def observe(self, unit: MemoryUnit) -> list[int]:
        """File ``unit``'s claims (replacing any it had); returns the units it supersedes.

        Superseded units are the evidence of facts this unit closed: their memories
        stay valid, only the facts they stated end here. Each gets a SUPERSEDES edge.
        """
        claims = claims_of(unit)
        claims += told_of(unit, claims, lambda: self._earlier(unit))
        superseded: list[int] = []
        poses = _PoseColumns()
        with self.store.atomic() as db:
            # Claims it made before (enrichment re-observes a unit) are taken back first.
            late: dict[tuple[str, str], float] = {}
            for k, a, stamp in db.execute(
                    'SELECT entity, attribute, stamp FROM fact_claims WHERE unit_id = ?', (unit.id,)):
                late[(k, a)] = min(stamp, late.get((k, a), stamp))
            if late:
                db.execute('DELETE FROM fact_claims WHERE unit_id = ?', (unit.id,))
            for claim in sorted(claims, key=lambda c: c.stamp):
                pair = (claim.key, claim.attribute)
                newest = db.execute('SELECT MAX(stamp) FROM fact_claims WHERE entity = ? AND attribute = ?',
                                    pair).fetchone()[0]
                if pair in late or (newest is not None and claim.stamp <= newest):
                    self._insert_claim(db, claim, key=pair[0], pose=poses.of(claim.pose))
                    late[pair] = min(claim.stamp, late.get(pair, claim.stamp))
                    continue
                fid, closed = self._extend(db, claim, pair[0], poses)
                self._insert_claim(db, claim, key=pair[0], pose=poses.of(claim.pose), fact_id=fid)
                if closed and claim.attribute != POSITION:
                    superseded += closed
            for (key, attribute), since in late.items():
                self._recompute(db, key, attribute, since=since)
            self.store.add_edges(Edge(unit.id, old, EdgeKind.SUPERSEDES, _SUPERSEDES_WEIGHT)
                                 for old in dict.fromkeys(superseded) if old != unit.id)
        return list(dict.fromkeys(u for u in superseded if u != unit.id))

    def forget_units(self, unit_ids: Sequence[int]) -> None:
        """Rebuild the timelines the given (just deleted or about to be) units fed."""
        with self.store.atomic() as db:
            pairs: dict[tuple[str, str], float] = {}
            for chunk in chunks(unit_ids):
                marks = qmarks(len(chunk))
                for k, a, stamp in db.execute(
                        f'SELECT entity, attribute, stamp FROM fact_claims WHERE unit_id IN ({marks})',
                        chunk):
                    pairs[(k, a)] = min(stamp, pairs.get((k, a), stamp))
                db.execute(f'DELETE FROM fact_claims WHERE unit_id IN ({marks})', chunk)
            for (key, attribute), since in pairs.items():
                self._recompute(db, key, attribute, since=since)

    def _earlier(self, unit: MemoryUnit) -> list[MemoryUnit]:
        """The units told just before ``unit`` in its episode, newest first (none without an
        episode; at most :data:`~brainmem_ros.memory.discourse.TURNS`)."""
        if not unit.episode_id:
            return []
        ids = [r[0] for r in self.store._query(
            'SELECT id FROM units WHERE episode_id = ? AND (stamp < ? OR (stamp = ? AND id < ?)) '
            'ORDER BY stamp DESC, id DESC LIMIT ?',
            (unit.episode_id, unit.stamp, unit.stamp, unit.id, TURNS))]
        units = self.store.get_units(ids)
        return [units[i] for i in ids if i in units]

    def rebuild(self) -> int:
        """Derive every fact again from the units (after a migration); returns the fact count."""
        with self.store.atomic() as db:
            db.execute('DELETE FROM fact_claims')
            db.execute('DELETE FROM facts')
            last = 0
            while True:
                ids = [r[0] for r in db.execute('SELECT id FROM units WHERE id > ? ORDER BY id LIMIT ?',
                                                (last, _BATCH))]
                if not ids:
                    break
                last = ids[-1]
                for unit in self.store.get_units(ids).values():
                    own = claims_of(unit)
                    for claim in own + told_of(unit, own, functools.partial(self._earlier, unit)):
                        self._insert_claim(db, claim)
            for key, attribute in db.execute(
                    'SELECT DISTINCT entity, attribute FROM fact_claims').fetchall():
                self._recompute(db, key, attribute)
            db.execute('DELETE FROM meta WHERE key = ?', (REBUILD_KEY,))
            db.execute('INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)', (DERIVED_KEY, '1'))
            return int(db.execute('SELECT COUNT(*) FROM facts').fetchone()[0])

    def drop_derived_claims(self) -> int:
        """Take back claims that derived units filed (stores written before they stopped,
        see :data:`~brainmem_ros.memory.facts.DERIVED_TYPES`) and rebuild the timelines
        they were part of, from their earliest such claim; returns the claims dropped.

        Once per store: afterwards only ``DERIVED_KEY`` is read.
        """
        types = [t.value for t in DERIVED_TYPES]
        with self.store.atomic() as db:
            derived = f'SELECT id FROM units WHERE type IN ({qmarks(len(types))})'
            pairs = db.execute('SELECT entity, attribute, MIN(stamp), COUNT(*) FROM fact_claims '
                               f'WHERE unit_id IN ({derived}) GROUP BY entity, attribute', types).fetchall()
            if pairs:
                db.execute(f'DELETE FROM fact_claims WHERE unit_id IN ({derived})', types)
            for key, attribute, since, _n in pairs:
                self._recompute(db, key, attribute, since=since)
            db.execute('INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)', (DERIVED_KEY, '1'))
        return sum(n for *_, n in pairs)

    def derived_claims_checked(self) -> bool:
        """Whether :meth:`drop_derived_claims` has run on this store."""
        return bool(self.store.get_meta(DERIVED_KEY))

    def rebuild_pending(self) -> bool:
        """Whether a migration asked for the facts to be derived again."""
        return bool(self.store.get_meta(REBUILD_KEY))

    def _insert_claim(self, db: sqlite3.Connection, claim: Claim, *, key: str | None = None,
                      pose: str | None = None, fact_id: int | None = None) -> None:
        """File one claim (``key``, ``pose``: its entity key and pose column, when known)."""
        db.execute('INSERT OR REPLACE INTO fact_claims(entity, attribute, unit_id, stamp, name, value, '
                   'source, confidence, pose, fact_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                   (claim.key if key is None else key, claim.attribute, claim.unit_id, claim.stamp,
                    claim.entity, claim.value, claim.source, claim.confidence,
                    pose_json(claim.pose) if key is None else pose, fact_id))

    def _extend(self, db: sqlite3.Connection, claim: Claim, key: str,
                poses: _PoseColumns) -> tuple[int | None, list[int]]:
        """In-order claim (not filed yet): confirm the open fact or close it and open the next.

        Returns the fact the claim is evidence of (None: a dropped "from") and the units
        whose fact it closed. A fact's first claim is at its ``valid_from`` and its newest at
        its ``last_seen``, so both are primary-key lookups, however long the fact has held.
        """
        attribute = claim.attribute
        row = db.execute('SELECT id, value, valid_from, last_seen, pose, confidence FROM facts '
                         'WHERE entity = ? AND attribute = ? AND valid_until IS NULL '
                         'ORDER BY valid_from DESC LIMIT 1', (key, attribute)).fetchone()
        if row is not None:
            fid, value, valid_from, last_seen, pose, confidence = row
            if attribute == POSITION:  # the same place: near the first sighting
                first = self._claims(db, 'entity = ? AND attribute = ? AND stamp = ? AND fact_id = ? '
                                     'ORDER BY unit_id LIMIT 1', (key, attribute, valid_from, fid)) or \
                    self._claims(db, 'fact_id = ? ORDER BY stamp, unit_id LIMIT 1', (fid,))
                confirms = bool(first) and same_value(attribute, first[0], claim)
            else:  # every claim of a fact has the value key of its first
                confirms = value_key(attribute, value) == value_key(attribute, claim.value)
            if confirms:
                if attribute == POSITION:
                    value = fact_of([claim], None).value
                db.execute('UPDATE facts SET last_seen = MAX(last_seen, ?), value = ?, confidence = ?, '
                           'pose = ? WHERE id = ?',
                           (claim.stamp, value,
                            round(1.0 - (1.0 - confidence) * (1.0 - claim.confidence), 4),
                            poses.of(claim.pose) if claim.pose is not None else pose, fid))
                return fid, []
            if claim.source == 'before':
                return None, []  # only ever confirms (see facts.runs); filed, part of no fact
            db.execute('UPDATE facts SET valid_until = ? WHERE id = ?', (claim.stamp, fid))
        new = self._insert_fact(db, key, fact_of([claim], None), pose=poses.of(claim.pose))
        if row is None:
            return new, []
        newest = db.execute('SELECT unit_id FROM fact_claims WHERE entity = ? AND attribute = ? '
                            'AND stamp = ? AND fact_id = ? ORDER BY unit_id DESC LIMIT 1',
                            (key, attribute, last_seen, fid)).fetchall() or \
            db.execute('SELECT unit_id FROM fact_claims WHERE fact_id = ? ORDER BY stamp DESC LIMIT 1',
                       (fid,)).fetchall()
        return new, [r[0] for r in newest]

    def _recompute(self, db: sqlite3.Connection, key: str, attribute: str, *,
                   since: float | None = None) -> None:
        """Rebuild one timeline from its claims, all of it or from where ``since`` falls.

        From ``since``, the regrouping starts at the fact before the one holding at
        ``since``: its first claim is untouched, so the facts kept before it still end
        where the regrouped ones begin, and a late claim costs the facts after it only.
        """
        start = -math.inf
        if since is not None:
            holding = db.execute('SELECT MAX(valid_from) FROM facts WHERE entity = ? AND attribute = ? '
                                 'AND valid_from <= ?', (key, attribute, since)).fetchone()[0]
            before = None if holding is None else db.execute(
                'SELECT MAX(valid_from) FROM facts WHERE entity = ? AND attribute = ? AND valid_from < ?',
                (key, attribute, holding)).fetchone()[0]
            start = -math.inf if before is None else before
            while start > -math.inf:
                # A kept fact whose last claim shares the start's stamp would be cut in two.
                row = db.execute('SELECT valid_from, last_seen FROM facts WHERE entity = ? AND attribute = ? '
                                 'AND valid_from < ? ORDER BY valid_from DESC LIMIT 1',
                                 (key, attribute, start)).fetchone()
                if row is None or row[1] < start:
                    break
                start = row[0]
        claims = self._claims(db, 'entity = ? AND attribute = ? AND stamp >= ?', (key, attribute, start))
        db.execute('DELETE FROM facts WHERE entity = ? AND attribute = ? AND valid_from >= ?',
                   (key, attribute, start))
        # Claims that end up in no fact (a dropped "from") must not keep a reused fact id.
        db.execute('UPDATE fact_claims SET fact_id = NULL WHERE entity = ? AND attribute = ? AND stamp >= ?',
                   (key, attribute, start))
        groups = runs(claims)
        kept = db.execute('SELECT id FROM facts WHERE entity = ? AND attribute = ? '
                          'ORDER BY valid_from DESC LIMIT 1', (key, attribute)).fetchone()
        if kept is not None:
            db.execute('UPDATE facts SET valid_until = ? WHERE id = ?',
                       (groups[0][0].stamp if groups else None, kept[0]))
        for i, group in enumerate(groups):
            fid = self._insert_fact(db, key, fact_of(group, groups[i + 1][0].stamp if i + 1 < len(groups)
                                                     else None))
            db.executemany('UPDATE fact_claims SET fact_id = ? WHERE entity = ? AND attribute = ? AND '
                           'unit_id = ? AND stamp = ?',
                           [(fid, key, attribute, c.unit_id, c.stamp) for c in group])

    def _insert_fact(self, db: sqlite3.Connection, key: str, fact: Fact, *, pose: str | None = None) -> int:
        cur = db.execute(
            'INSERT INTO facts(entity, head, name, attribute, value, valid_from, valid_until, last_seen, '
            'pose, source, confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
            (key, _head(key), fact.entity, fact.attribute, fact.value, fact.valid_from, fact.valid_until,
             fact.last_seen, pose if pose is not None else pose_json(fact.pose), fact.source,
             fact.confidence))
        return int(cur.lastrowid or 0)

    # -- reading ---------------------------------------------------------------------

    def _claims(self, db: sqlite3.Connection, where: str, params: Sequence[Any]) -> list[Claim]:
        return [Claim(name, attribute, value, stamp, unit_id, source, confidence, decode_pose(pose))
                for name, attribute, value, stamp, unit_id, source, confidence, pose in db.execute(
                    'SELECT name, attribute, value, stamp, unit_id, source, confidence, pose '
                    f'FROM fact_claims WHERE {where}', params)]

    @staticmethod
    def _fact(row: Sequence[Any], evidence: tuple[int, ...]) -> Fact:
        fid, _key, name, attribute, value, valid_from, valid_until, last_seen, pose, source, conf = row
        return Fact(entity=name, attribute=attribute, value=value, valid_from=valid_from,
                    valid_until=valid_until, evidence=evidence, last_seen=last_seen, source=source,
                    confidence=conf, pose=decode_pose(pose), id=fid)

    def matching_keys(self, name: str) -> list[str]:
        """Entity keys that ``name`` (as a user types it) refers to; the exact key first."""
        return with_containers(self.store._query, name, keys_by_name(self.store._query, [name])[name])

    def facts_of(self, keys: Iterable[str], *, attribute: str | None = None,
                 skip: Sequence[str] = ()) -> list[Fact]:
        """All facts (with their evidence) of the given entity keys."""
        facts: list[Fact] = []
        for key in dict.fromkeys(keys):
            sql = f'SELECT {_FACT_COLUMNS} FROM facts WHERE entity = ?'
            params: list[Any] = [key]
            if attribute is not None:
                sql += ' AND attribute = ?'
                params.append(attribute)
            if skip:
                sql += f' AND attribute NOT IN ({qmarks(len(skip))})'
                params.extend(skip)
            rows = self.store._query(sql, params)
            evidence: dict[int, list[int]] = {}
            if rows:
                ids = [r[0] for r in rows]
                for fid, uid in self.store._query(
                        f'SELECT fact_id, unit_id FROM fact_claims WHERE fact_id IN ({qmarks(len(ids))}) '
                        'ORDER BY stamp, unit_id', ids):
                    evidence.setdefault(fid, []).append(uid)
            facts += [self._fact(r, tuple(dict.fromkeys(evidence.get(r[0], ())))) for r in rows]
        return facts

    def facts_about(self, names: Sequence[str], *, skip: Sequence[str] = ()) -> list[Fact]:
        """All facts of the entities that ``names`` match (see :func:`names_match`)."""
        return self.facts_of([k for keys in keys_by_name(self.store._query, names).values() for k in keys],
                             skip=skip)

    def last_positions(self, *, limit: int) -> list[Fact]:
        """The open position facts with a pose: where each object was last seen."""
        rows = self.store._query(f'SELECT {_FACT_COLUMNS} FROM facts WHERE attribute = ? AND '
                                'valid_until IS NULL AND pose IS NOT NULL ORDER BY last_seen DESC LIMIT ?',
                                (POSITION, limit))
        return [self._fact(r, ()) for r in rows]

    def count(self) -> int:
        """Number of facts (open and closed)."""
        return int(self.store._query('SELECT COUNT(*) FROM facts')[0][0])


class _PoseColumns:
    """The ``pose`` column of each pose, written once: every claim of a unit has the unit's."""

    def __init__(self) -> None:
        self._pose: Pose | None = None
        self._column: str | None = None

    def of(self, pose: Pose | None) -> str | None:
        if pose is None:
            return None
        if pose is not self._pose:
            self._pose, self._column = pose, pose_json(pose)
        return self._column


def observe_facts(store: SqliteStore, unit: MemoryUnit) -> list[int]:
    """What Store and enrichment call per new or changed unit (see :meth:`FactStore.observe`)."""
    return FactStore(store).observe(unit)
