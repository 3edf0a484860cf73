"""Lexical recall stays bounded at scale and still finds rare words at any age."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import MemoryUnit, UnitFilter, UnitType


def test_rare_words_found_at_any_age_common_words_bounded(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'm.db')
    vec = np.zeros(4, dtype=np.float32)
    with store.atomic():
        text = 'Ms. Okonkwo left a parcel at the kitchen desk'
        old = store.insert_unit(MemoryUnit(id=0, stamp=1.0, text=text, last_access=1.0, valid_from=1.0), vec)
        for i in range(1500):
            store.insert_unit(MemoryUnit(id=0, stamp=2.0 + i, text=f'I wiped the kitchen counter, pass {i}',
                                         last_access=2.0, valid_from=2.0), vec)
    def search(match: str, *, active_only: bool = True) -> list[int]:
        unit_filter = UnitFilter(types=frozenset(UnitType), include_marginalized=not active_only)
        return [uid for uid, _ in store.fts_scored(match, limit=10, unit_filter=unit_filter)]

    assert search('"okonkwo"') == [old]
    common = search('"kitchen"')
    assert len(common) == 10 and old not in common  # only the newest 1,000 matches are ranked
    store.set_fields(old, marginalized=1)
    assert search('"okonkwo"') == []
    assert search('"okonkwo"', active_only=False) == [old]
    store.close()
