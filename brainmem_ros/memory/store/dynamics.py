"""What reinforcement, consolidation and reflection write and read, as named statements.

The rules (how much a unit decays, which units are weak, what a reward does) are
:mod:`brainmem_ros.memory.dynamics`; these methods only apply them to rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from brainmem_ros.memory.store.connection import Connection

# Decay by a factor, then fold in the accesses since the last fold, capped.
_FOLD = ('strength = MIN(?, strength * ? + ? * (access_count - folded_access)), '
         'folded_access = access_count')


class UnitDynamics(Connection):
    """Strength, marginalization and the reinforcement log of units."""

    def decay_range(self, lo: int, hi: int, *, factor: float, access_gain: float, cap: float) -> int:
        """Decay every unprotected unit with ``lo < id <= hi`` by one factor; returns how many."""
        with self.atomic() as db:
            return int(db.execute(f'UPDATE units SET {_FOLD} WHERE protected = 0 AND id > ? AND id <= ?',
                                  (cap, factor, access_gain, lo, hi)).rowcount)

    def unprotected_stamps(self, lo: int, hi: int) -> list[tuple[int, float]]:
        """(id, stamp) of the unprotected units with ``lo < id <= hi``."""
        with self._lock:
            return [(int(u), float(s)) for u, s in self._query(
                'SELECT id, stamp FROM units WHERE protected = 0 AND id > ? AND id <= ?', (lo, hi))]

    def decay_each(self, factors: Sequence[tuple[int, float]], *, access_gain: float, cap: float) -> None:
        """Decay each unit by its own factor (``(id, factor)`` pairs)."""
        with self.atomic() as db:
            db.executemany(f'UPDATE units SET {_FOLD} WHERE id = ?',
                           [(cap, factor, access_gain, uid) for uid, factor in factors])

    def marginalize_weak(self, lo: int, hi: int, *, below: float) -> list[int]:
        """Marginalize the active, unprotected units with ``lo < id <= hi`` weaker than ``below``.

        Returns their ids; the caller takes them out of the vector index.
        """
        with self.atomic() as db:
            weak = [int(r[0]) for r in db.execute(
                'SELECT id FROM units WHERE protected = 0 AND marginalized = 0 AND strength < ? '
                'AND id > ? AND id <= ?', (below, lo, hi)).fetchall()]
            if weak:
                db.executemany('UPDATE units SET marginalized = 1 WHERE id = ?', [(i,) for i in weak])
            return weak

    def strengthen_units(self, ids: Sequence[int], *, gain: float, cap: float) -> None:
        """Add ``gain`` to the strength of each unit, capped (replay)."""
        with self.atomic() as db:
            db.executemany('UPDATE units SET strength = MIN(?, strength + ?) WHERE id = ?',
                           [(cap, gain, i) for i in ids])

    def record_reinforcement(self, ids: Sequence[int], *, reward: float, note: str, now: float) -> None:
        """Append one reinforcement to the log (note cut to 1,000 characters)."""
        with self.atomic() as db:
            db.execute('INSERT INTO reinforcements(stamp, unit_ids, reward, note) VALUES (?, ?, ?, ?)',
                       (now, ','.join(str(i) for i in ids), reward, note[:1000]))

    def importance_since(self, after: int, *, skip_type: str) -> tuple[int | None, float]:
        """(newest id, total importance) of the units with ``id > after`` not of ``skip_type``.

        One aggregate over the primary key range: every Store asks it.
        """
        newest, total = self._query('SELECT max(id), total(importance) FROM units WHERE id > ? AND type != ?',
                                   (after, skip_type))[0]
        return (None if newest is None else int(newest)), float(total)

    def newest_ids(self, after: int, upto: int, *, skip_type: str, limit: int) -> list[int]:
        """The ``limit`` newest ids in ``after < id <= upto`` not of ``skip_type``, oldest first."""
        rows = self._query('SELECT id FROM units WHERE id > ? AND id <= ? AND type != ? '
                          'ORDER BY id DESC LIMIT ?', (after, upto, skip_type, limit))
        return [int(r[0]) for r in reversed(rows)]
