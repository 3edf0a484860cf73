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


def test_document_counts_are_exact_until_the_store_grows_one_percent(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'm.db')
    vec = np.zeros(4, dtype=np.float32)

    def add(text: str) -> None:
        store.insert_unit(MemoryUnit(id=0, stamp=1.0, text=text, last_access=1.0, valid_from=1.0), vec)

    try:
        for i in range(3):
            add(f'The kettle boiled, round {i}')
        assert store.term_document_counts(['kettle'])[0] == {'kettl': 3}
        add('The kettle is empty')  # a small store: any growth counts again
        assert store.term_document_counts(['kettles'])[0] == {'kettl': 4}
        with store.atomic():
            for i in range(196):
                add(f'Swept the floor, pass {i}')
        counts, total = store.term_document_counts(['kettle'])
        assert (counts, total) == ({'kettl': 4}, 200)
        add('A second kettle arrived')  # 201 units: within 1% of 200, the count is held
        assert store.term_document_counts(['kettle'])[0] == {'kettl': 4}
        with store.atomic():
            for i in range(2):
                add(f'Another kettle, number {i}')
        assert store.term_document_counts(['kettle'])[0] == {'kettl': 7}  # 203: counted again
    finally:
        store.close()
