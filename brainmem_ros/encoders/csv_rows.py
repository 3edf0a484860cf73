"""Rows of comma-separated values, read by the names of their header's columns.

Inventory and sensor loggers write CSV: a header once (``ts,item,location,holder,status``),
then one row per event (``2024-05-02T08:30:00,brown parcel,hallway,,moved_inside``), and a
robot stores each line as it comes, so the row that says where the parcel went arrives in
an observation of its own, long after the header. Without the header a row is a list of
words that names nothing; with it, it is a record of fields like any other log line. So the
columns of the last header seen name the cells of later rows with as many cells, and such a
row is read as ``ts=... | item=brown parcel | location=hallway | status=moved_inside`` by the
record reader (:mod:`~brainmem_ros.encoders.log_records`).

A header is a line of two or more comma-separated names, one of them a key of the thing a
record is about (``item``, ``object``, ``label``...). A row has no space after its commas
(prose does: "the cup, the plate and the fork"). The last header is kept per extractor, that
is per memory: two loggers writing rows of the same width under different headers, through
one memory, would be read by whichever header came last.
"""

from __future__ import annotations

import csv
import re

from brainmem_ros.encoders.record_fields import THING_KEYS, role_key

# A column name: a word, with underscores, dots or dashes ("item", "holder_id", "loc.room").
_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_.\-]*$')


def _cells(line: str) -> list[str] | None:
    """The cells of a comma-separated line, or None for a line that is not one."""
    if line.count(',') < 1 or re.search(r',\s', line):
        return None
    try:
        cells = next(csv.reader([line.strip()]))
    except (csv.Error, StopIteration):
        return None
    return [c.strip() for c in cells] if len(cells) >= 2 else None


def _header(cells: list[str]) -> tuple[str, ...] | None:
    """The column names of a header line (lower case), or None when ``cells`` are no header."""
    if not all(_NAME.match(c) for c in cells):
        return None
    names = tuple(c.lower() for c in cells)
    return names if any(role_key(n) in THING_KEYS for n in names) else None


class CsvColumns:
    """The columns of the last CSV header an extractor read (see the module)."""

    def __init__(self) -> None:
        self._columns: tuple[str, ...] | None = None

    def as_records(self, text: str) -> str:
        """``text`` with each CSV row as a record of ``column=cell`` fields and its header lines
        left out; ``text`` itself when it holds no row that a header names."""
        if ',' not in text:
            return text
        out: list[str] = []
        rows = 0
        for line in text.splitlines():
            cells = _cells(line)
            header = _header(cells) if cells is not None else None
            if header is not None:
                self._columns = header
                continue
            columns = self._columns
            if cells is not None and columns is not None and len(cells) == len(columns):
                out.append(' | '.join(f'{k}={v}' for k, v in zip(columns, cells, strict=True) if v))
                rows += 1
            else:
                out.append(line)
        return '\n'.join(out) if rows else text
