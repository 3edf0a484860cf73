"""Refreshing some sections of docs/benchmarks.md without re-running every benchmark.

A full ``make bench`` takes hours on 2 cores (the 1M store, the peers, the LLM). After a
change that moves one figure (the consolidation cycle, say), re-running that benchmark
and ``python -m bench.report --sections consolidation`` replaces that section and the
rows of the targets table it feeds; every other section is kept as the last full run
wrote it. The page's header says what was re-run, when and on which CPU, since the
figures of one page then come from two runs. The results file holds only what ran on
this machine, so a section missing from it is kept, never rendered empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TARGETS = '## DESIGN §5 targets'
# Written by hand in bench/report.py, not measured: always taken from the current code.
PROSE = ('## What stands in the way of the targets',)
#: What a re-run's header note says after the names of its sections (bench/report.py).
RERUN = ' re-run on '


@dataclass(frozen=True)
class Section:
    """A part of the page a benchmark can refresh on its own."""

    heading: str  # the line that opens it on the page
    results: tuple[str, ...]  # the results file's sections it is rendered from
    target_rows: tuple[str, ...] = ()  # the targets table's rows it feeds (label prefixes)


SECTIONS: dict[str, Section] = {
    'encoder': Section('## The encoder', ('encoder',)),
    'build': Section('## Building the stores', ('build',)),
    'retrieve': Section('## Retrieve latency', ('retrieve_inprocess', 'retrieve_ros', 'retrieve_runs'),
                        ('Retrieve p99 through the service',)),
    'stages': Section('## Where the time goes', ('retrieve_inprocess',)),
    'store': Section('## Store fast path', ('store_inprocess', 'store_ros'),
                     ('Store fast path',)),
    'open': Section('## Opening a store, and memory', ('open',),
                    ('RSS per unit', 'Open a 100k-unit store')),
    'consolidation': Section('## Consolidation', ('consolidate',),
                             ('Retrieve while consolidation cycles run',)),
}


def split(page: str) -> list[tuple[str, str]]:
    """The page as (heading, text) pairs in order; the text before the first heading has heading ''."""
    parts: list[tuple[str, list[str]]] = [('', [])]
    for line in page.splitlines():
        if line.startswith('## '):
            parts.append((line.strip(), []))
        parts[-1][1].append(line)
    return [(heading, '\n'.join(lines)) for heading, lines in parts]


def _row_label(line: str) -> str | None:
    if not line.startswith('| ') or line.startswith('|---'):
        return None
    return line[2:].split(' | ', 1)[0].strip()


def _labels(text: str) -> set[str]:
    return {label for line in text.splitlines() if (label := _row_label(line))}


def merge_rows(old: str, new: str, prefixes: Sequence[str], note: str) -> str:
    """``old``'s table with each row whose label starts with one of ``prefixes`` taken from ``new``.

    A refreshed row's measurement (third cell) is prefixed with ``note``; rows ``new`` lacks
    are kept as they were.

    >>> head = '| target | goal | measured |  |\\n|---|---|---|---|\\n'
    >>> old = head + '| A 10k | 1 | 2 | met |\\n| B | 1 | 3 | met |'
    >>> new = head + '| A 10k | 1 | 5 | missed |'
    >>> print(merge_rows(old, new, ['A '], 're-run:'))
    | target | goal | measured |  |
    |---|---|---|---|
    | A 10k | 1 | re-run: 5 | missed |
    | B | 1 | 3 | met |
    """
    fresh = {label: line for line in new.splitlines()
             if (label := _row_label(line)) and label.startswith(tuple(prefixes))}
    out = []
    for line in old.split('\n'):  # not splitlines(): the blank line before the next heading stays
        label = _row_label(line)
        if label in fresh:
            cells = fresh[label].split(' | ')
            cells[2] = f'{note} {cells[2]}'
            out.append(' | '.join(cells))
        else:
            out.append(line)
    return '\n'.join(out)


def splice(old: str, new: str, names: Sequence[str], *, date: str, note: str) -> str:
    """``old`` with the sections ``names`` (keys of :data:`SECTIONS`) and their target rows from
    ``new`` (marked as re-run on ``date``), and ``note`` added to the header, in place of the
    note of an earlier re-run of the same sections (the words before :data:`RERUN`).

    Raises ``ValueError`` when a section is missing from either page (a page from another
    version of the report).
    """
    wanted = {SECTIONS[n].heading for n in names}
    fresh = dict(split(new))
    parts = split(old)
    headings = {h for h, _ in parts}
    for heading in wanted:
        if heading not in headings or heading not in fresh:
            raise ValueError(f'section {heading!r} is not on both pages: run the full `make bench`')
        lost = _labels(dict(parts)[heading]) - _labels(fresh[heading])
        if lost:
            # A re-run at fewer sizes than the page shows would drop rows without a word.
            raise ValueError(f'the re-run of {heading!r} lacks rows {sorted(lost)}: run it at every size')
    prefixes = [p for n in names for p in SECTIONS[n].target_rows]
    out = []
    for heading, text in parts:
        if heading == '':
            # A note of an earlier re-run of these sections (or some of them) gives way to this one.
            kept = [p for p in text.rstrip('\n').split('\n\n') if p != note and not _noted(p) <= set(names)]
            out.append('\n\n'.join([*kept, note]) + '\n')
        elif heading in wanted or (heading.startswith(PROSE) and heading in fresh):
            out.append(fresh[heading])
        elif heading == TARGETS and TARGETS in fresh:
            out.append(merge_rows(text, fresh[TARGETS], prefixes, f'(re-run {date})'))
        else:
            out.append(text)
    return '\n'.join(out)


def _noted(paragraph: str) -> set[str]:
    """The sections a re-run's header note names ({'?'} when a paragraph is no such note)."""
    if not paragraph.startswith('*') or RERUN not in paragraph:
        return {'?'}
    by_label = {s.heading.removeprefix('## '): n for n, s in SECTIONS.items()}
    return {by_label.get(label, '?') for label in paragraph[1:].split(RERUN, 1)[0].split(', ')}


def names_label(names: Sequence[str]) -> str:
    """How the header names a set of re-run sections."""
    return ', '.join(SECTIONS[n].heading.removeprefix('## ') for n in names)
