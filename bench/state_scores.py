"""State changes scored against labelled sets written for them (part of ``bench.eval_extraction``).

The facts of the memory (where a thing is, what state it is in) are the extractor's
``StateChange(object, attribute, before, after)``; this scores them on 160 observations in
the eight styles of the extraction sets, a quarter of them stating no change (requests,
plans, failed attempts, negations, questions), labelled by hand from a written guideline
without running or reading the extractor. Before any score was read they were split, by
style, into ``test/data/state_changes_dev.jsonl`` (the first 10 of each style), whose
errors may be read to find error classes, and ``test/data/state_changes_holdout.jsonl``
(the last 10), whose errors are not read. ``test/data/state_changes_holdout2.jsonl`` (80
more, written the same way after the rules of that error reading were in) was never
looked at but through its scores.

A change is right when its thing, attribute and new value equal a labelled one ("what
the fact layer records"); ``before`` is scored apart, over the right changes whose label
states one. Names are compared as the entity scores compare them (normalised, each word
reduced to its noun lemma); a thing named by its head alone ("mug" for "red mug") counts
in the lenient columns only. "False facts" counts observations labelled with no change
for which the extractor reported one: a fact the memory would hold that nothing stated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from brainmem_ros.memory.types import Extraction, StateChange

_DATA = Path(__file__).resolve().parent.parent / 'test' / 'data'
#: Split name -> labelled file.
SETS = {'dev': _DATA / 'state_changes_dev.jsonl', 'hold-out': _DATA / 'state_changes_holdout.jsonl',
        'hold-out 2': _DATA / 'state_changes_holdout2.jsonl',
        'logs dev': _DATA / 'state_changes_logs_dev.jsonl',
        'logs hold-out': _DATA / 'state_changes_logs_holdout.jsonl'}
#: Attributes whose values are names of things (compared as names); the others are words or readings.
_PLACES = frozenset({'location'})


@dataclass
class StateTally:
    """Micro counts of one extractor over one split."""

    rows: int = 0
    got: int = 0
    want: int = 0
    right: int = 0
    lenient: int = 0
    before_stated: int = 0
    before_right: int = 0
    empty_rows: int = 0
    false_fact_rows: int = 0

    def cells(self) -> list[str]:
        """P, R (exact), P, R (lenient), before right, false facts, formatted."""
        return [ratio(self.right, self.got), ratio(self.right, self.want), ratio(self.lenient, self.got),
                ratio(self.lenient, self.want), f'{self.before_right} / {self.before_stated}',
                f'{self.false_fact_rows} / {self.empty_rows}']


def ratio(num: int, den: int) -> str:
    """``num / den`` to three places, ``n/a`` for nothing counted."""
    return f'{num / den:.3f}' if den else 'n/a'


def load() -> list[dict[str, object]]:
    """The labelled rows of every split, each with its ``split`` (none when the sets are absent)."""
    rows: list[dict[str, object]] = []
    for split, path in SETS.items():
        if path.is_file():
            rows += [{**json.loads(line), 'split': split}
                     for line in path.read_text(encoding='utf-8').splitlines() if line.strip()]
    return rows


def score(rows: Sequence[dict[str, object]], extract: Callable[[str], Extraction],
          key: Callable[[str], str]) -> dict[str, StateTally]:
    """Tallies per split (its whole, and ``'<split> <style>'``); ``key`` normalises a name."""
    tallies: dict[str, StateTally] = {}
    for row in rows:
        got = [_norm(c, key) for c in extract(str(row['text'])).state_changes]
        want = [_norm(StateChange(str(c['object']), str(c['attribute']), str(c.get('before', '')),
                                  str(c['after'])), key)
                for c in row['changes']]  # type: ignore[attr-defined]
        split = str(row.get('split', 'dev'))
        for name in (split, f'{split} {row["style"]}'):
            _count(tallies.setdefault(name, StateTally()), got, want)
    return tallies


def _count(t: StateTally, got: list[StateChange], want: list[StateChange]) -> None:
    t.rows += 1
    t.got += len(got)
    t.want += len(want)
    free = list(want)
    for change in got:
        exact = next((w for w in free if (w.object, w.attribute, w.after)
                      == (change.object, change.attribute, change.after)), None)
        match = exact or next((w for w in free if _head(w.object) == _head(change.object)
                               and (w.attribute, w.after) == (change.attribute, change.after)), None)
        if match is None:
            continue
        free.remove(match)
        t.lenient += 1
        t.right += match is exact
        if match.before:
            t.before_stated += 1
            t.before_right += match.before == change.before
    if not want:
        t.empty_rows += 1
        t.false_fact_rows += bool(got)


def _norm(c: StateChange, key: Callable[[str], str]) -> StateChange:
    def value(v: str) -> str:
        if c.attribute in _PLACES and v != 'held':
            return key(v)
        return ' '.join(v.lower().replace('%', ' %').split())  # "18%" and "18 %" are one reading
    return StateChange(key(c.object), c.attribute.lower(), value(c.before), value(c.after))


def _head(name: str) -> str:
    return name.rsplit(' ', 1)[-1]


def table(results: dict[str, dict[str, StateTally]], styles: Sequence[str]) -> list[str]:
    """Markdown rows: one per extractor and split, the dev split also per style."""
    lines = ['| extractor | split | n | P | R | P (head) | R (head) | before right | false facts |',
             '|---|---|---|---|---|---|---|---|---|']
    for name, tallies in results.items():
        for split in ('dev', *(f'dev {s}' for s in styles), 'hold-out', 'hold-out 2', 'logs dev',
                      'logs dev detection', 'logs dev navlog', 'logs hold-out'):
            t = tallies.get(split)
            if t is not None and t.rows:
                lines.append(f'| {name} | {split} | {t.rows} | ' + ' | '.join(t.cells()) + ' |')
    return lines


def section(results: dict[str, dict[str, StateTally]], styles: Sequence[str]) -> list[str]:
    """The page section, or nothing when the set is absent."""
    if not results:
        return []
    n = {split: max(t[split].rows for t in results.values() if split in t) for split in SETS}
    return ['## State changes, scored', '',
            f'`test/data/state_changes_dev.jsonl` ({n["dev"]}) and `test/data/state_changes_holdout.jsonl` '
            f'({n["hold-out"]}): observations in the eight styles, labelled by hand with the state changes '
            'they state (thing, attribute, before, after) from a written guideline, without running or '
            'reading the extractor, then split by style before any score was read; the dev errors may be '
            'read to find error classes, the hold-out errors are not. '
            f'`test/data/state_changes_holdout2.jsonl` ({n["hold-out 2"]}): written the same way once the '
            'rules found on the dev half were in, and read only through its scores. '
            f'`test/data/state_changes_logs_dev.jsonl` ({n["logs dev"]}) and '
            f'`test/data/state_changes_logs_holdout.jsonl` ({n["logs hold-out"]}): perception and navigation '
            'log lines in many formats (detector rows, key=value fields, JSON and XML fragments, scene-graph '
            'updates, state classifiers, task logs), written and labelled the same way, split by style into '
            'halves before any score was read; the log record reader '
            '(`brainmem_ros/encoders/log_records.py`) was written from the dev half\'s errors, the hold-out '
            'half is read only through its scores (`bench/state_scores.py` says how they are compared). '
            'P and R: a change is right when its '
            'thing, attribute and new value equal a label; "head": a thing named by its last word '
            'counts ("mug" for "red mug"); '
            '"before right": right changes whose label states where the thing came from, and how many '
            'of those name it; "false facts": observations stating no change (requests, plans, failed '
            'attempts, negations, questions) for which a change was reported.', '',
            *table(results, styles), '']
