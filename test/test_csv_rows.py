"""CSV rows read by their header's columns (brainmem_ros/encoders/csv_rows.py), through the real
parser extractor and a real memory: a logger writes its header once and its rows one by one."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainmem_ros.encoders.base import Embedder
from brainmem_ros.encoders.csv_rows import CsvColumns
from brainmem_ros.encoders.parsed import SpacyExtractor
from brainmem_ros.memory import BrainMem


def _changes(x: SpacyExtractor, text: str) -> set[tuple[str, str, str]]:
    return {(c.object, c.attribute, c.after) for c in x.extract(text).state_changes}


@pytest.fixture
def x() -> SpacyExtractor:
    return SpacyExtractor()  # a fresh one per test: it keeps the last header it read


def test_rows_after_a_header_are_records_of_its_columns(x: SpacyExtractor) -> None:
    # Written for the test: a tool-crib log, the header in the first observation only.
    assert _changes(x, 'time,object,room,state\n07:55,cordless drill,workshop,charging') == {
        ('cordless drill', 'location', 'workshop'), ('cordless drill', 'state', 'charging')}
    assert _changes(x, '08:40,cordless drill,garage,') == {('cordless drill', 'location', 'garage')}
    assert _changes(x, '09:10,tape measure,workshop,') == {('tape measure', 'location', 'workshop')}


def test_what_is_not_a_row_of_the_header_is_read_as_before(x: SpacyExtractor) -> None:
    assert _changes(x, '08:40,cordless drill,garage,') == set()  # no header yet: a list of words
    assert _changes(x, 'time,object,room,state') == set()  # a header states nothing
    # Prose puts a space after its commas; a row of another width is not this header's.
    assert _changes(x, 'I picked up the cup, the plate and the fork.') == {
        ('cup', 'location', 'held'), ('plate', 'location', 'held'), ('fork', 'location', 'held')}
    assert _changes(x, 'cordless drill,garage') == set()


def test_a_header_needs_a_column_of_the_thing() -> None:
    columns = CsvColumns()
    assert columns.as_records('red,green,blue\n1,2,3') == 'red,green,blue\n1,2,3'
    assert columns.as_records('label,zone\nmug,sink') == 'label=mug | zone=sink'
    assert columns.as_records('"spoon",drawer') == 'label=spoon | zone=drawer'  # quoted cells


def test_a_memory_answers_where_from_rows_stored_one_by_one(tmp_path: Path, embedder: Embedder) -> None:
    with BrainMem.open(tmp_path / 'm', embedder=embedder) as mem:
        mem.store('ts,item,place,holder\n1,torque wrench,shelf B,', stamp=1000.0)
        mem.store('2,torque wrench,,Ana', stamp=2000.0)
        mem.store('3,torque wrench,shelf C,', stamp=3000.0)
        assert next(f.value for f in mem.state_of('torque wrench') if f.current) == 'shelf c'
        then = [f.value for f in mem.state_of('torque wrench', as_of=2500.0) if f.valid_at(2500.0)]
        assert then[0] == 'ana'
