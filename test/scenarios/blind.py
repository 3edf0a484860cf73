"""Robot recall cases written blind: by hand, from a written brief, without the code.

``test/data/recall_cases_dev.jsonl`` and ``recall_cases_holdout.jsonl`` hold 24 cases
each, of eight kinds (paraphrase, rare word, multi-hop, time, goal, lesson, preference,
state), in the format of :class:`~scenarios.cases.Case` plus a ``kind``. They were
split into the two files by their writer before any result was read; only the dev
file's misses are read when working on recall, the hold-out file says whether a change
generalises (``make eval`` scores both on the routine background). ``recall_cases_dev2.jsonl``
(32 cases, four of each kind) was written later from a brief of the same kind by another writer
who did not read the code; it first scored 23 of 32 on 4c725a1 (plain vector 14), and its misses
are read like the dev file's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .cases import Case, Memory
from .runner import passes

__all__ = ['SPLITS', 'BlindCase', 'load', 'passes']

DATA = Path(__file__).resolve().parent.parent / 'data'
SPLITS: tuple[tuple[str, Path], ...] = (
    ('dev', DATA / 'recall_cases_dev.jsonl'),
    ('hold-out', DATA / 'recall_cases_holdout.jsonl'),
    ('dev 2', DATA / 'recall_cases_dev2.jsonl'),
)


@dataclass(frozen=True)
class BlindCase:
    """A case and its kind."""

    kind: str
    case: Case


def load(path: Path) -> list[BlindCase]:
    """The cases of one JSONL file."""
    out: list[BlindCase] = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        memories = tuple(Memory(m['key'], m['text'], float(m.get('at', 0.0)), str(m.get('episode', 'day-1')),
                                m.get('type', 'observation'))
                         for m in raw['memories'])
        as_of = raw.get('as_of')
        case = Case(raw['name'], memories, raw['query'], tuple(raw['expect']), goal=raw.get('goal', ''),
                    state=raw.get('state', ''), k=int(raw.get('k', 3)),
                    multi_hop=raw.get('kind') == 'multi-hop',
                    as_of=None if as_of is None else float(as_of), absent=tuple(raw.get('absent', ())))
        out.append(BlindCase(raw.get('kind', ''), case))
    return out
