"""Reflections are derived units: they restate observations and are no evidence of the world.

A reflection is stamped when it is written (``now``) and quotes observations' texts
("... Latest: \"Put the red mug on the shelf.\""). Had it filed the fact claims a parse of
that quote finds, it would have stated the quoted value again *now*: reopening a fact an
observation in between had closed, and making every later observation's claims late ones
that rebuild their timeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbfile import file_rows

from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.store.facts import DERIVED_KEY, FactStore
from brainmem_ros.memory.types import UnitType

T0 = 1_780_000_000.0
NOW = T0 + 1_000.0
_MUG = ('Picked up the red mug from the counter.', 'Cleaned the red mug at the sink.',
        'Put the red mug on the shelf.')


def _reflected(mem: BrainMem) -> list[int]:
    """Three observations of the red mug, then a reflection on them stamped ``NOW``."""
    for i, text in enumerate(_MUG):
        mem.store(text, stamp=T0 + 10.0 * i, importance=2.0)  # below the threshold: no reflection yet
    created = mem.reflect(force=True)
    assert created and all(u.type is UnitType.REFLECTION for u in created)
    assert any('Put the red mug on the shelf.' in u.text and u.stamp == NOW for u in created)
    return [u.id for u in created]


def test_a_reflection_is_evidence_of_no_fact(mem_factory: Any) -> None:
    mem = mem_factory(clock=lambda: NOW)
    reflections = _reflected(mem)
    # An observation that arrives after the reflection was written, stamped before it
    # (a live stream: the reflection is stamped at commit time, after its inputs).
    mem.store('Moved the red mug to the drawer.', stamp=T0 + 30.0, importance=2.0)
    facts = mem.state_of('red mug', attribute='location')
    assert facts[0].current and facts[0].value == 'drawer', facts
    assert all(f.valid_until is None or f.valid_until <= T0 + 30.0 for f in facts)
    assert not {uid for f in mem.state_of('red mug') for uid in f.evidence} & set(reflections)
    claimed = file_rows(mem.store_db.path, 'SELECT COUNT(*) FROM fact_claims c JOIN units u ON '
                        "u.id = c.unit_id WHERE u.type = 'reflection'")
    assert claimed == [(0,)]


def test_observations_after_a_reflection_are_not_late(mem_factory: Any, monkeypatch: Any) -> None:
    mem = mem_factory(clock=lambda: NOW)
    _reflected(mem)
    rebuilt: list[tuple[str, str]] = []
    recompute = FactStore._recompute

    def counting(self: FactStore, db: Any, key: str, attribute: str, **kwargs: Any) -> None:
        rebuilt.append((key, attribute))
        recompute(self, db, key, attribute, **kwargs)

    monkeypatch.setattr(FactStore, '_recompute', counting)
    # In time order after the observations: each extends or closes a fact in place.
    mem.store('Moved the red mug to the drawer.', stamp=T0 + 30.0, importance=2.0)
    mem.store('The red mug is back on the shelf.', stamp=T0 + 400.0, importance=2.0)
    assert rebuilt == []
    assert mem.state_of('red mug', attribute='location')[0].value == 'shelf'


def test_claims_filed_by_reflections_are_taken_back_on_open(mem_factory: Any, tmp_path: Path) -> None:
    path = tmp_path / 'older'
    mem = mem_factory(path, clock=lambda: NOW)
    reflection = _reflected(mem)[0]
    mem.store('Moved the red mug to the drawer.', stamp=T0 + 30.0, importance=2.0)
    # What a store written before reflections stopped claiming holds: a claim of the
    # reflection's, stamped at its time, that reopened the shelf after the drawer.
    with mem.store_db.atomic() as db:
        db.execute('INSERT OR REPLACE INTO fact_claims(entity, attribute, unit_id, stamp, name, value, '
                   "source, confidence) VALUES ('red mug', 'location', ?, ?, 'red mug', 'shelf', 'text', "
                   '0.8)', (reflection, NOW))
        mem.facts._recompute(db, 'red mug', 'location')
        db.execute('DELETE FROM meta WHERE key = ?', (DERIVED_KEY,))
    assert mem.state_of('red mug', attribute='location')[0].value == 'shelf'  # the damage
    mem.close()
    reopened = mem_factory(path, clock=lambda: NOW)
    facts = reopened.state_of('red mug', attribute='location')
    assert facts[0].current and facts[0].value == 'drawer', facts
    assert reflection not in {uid for f in facts for uid in f.evidence}
