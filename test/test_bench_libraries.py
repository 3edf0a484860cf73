"""The harness that measures other memory libraries on our data (bench/libraries.py).

The libraries themselves are installed only by ``make eval-libraries``; what is tested here
is the protocol they are held to, with a small stand-in library: each case's background is
the same, its own memories are found by the ids the library returns, its question carries
the goal and state, and the doc section puts their rows beside this run's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from scenarios.blind import SPLITS, load

from bench import libraries, locomo
from brainmem_ros.memory.lexicon import content_words


class _Embedder:
    """Never asked: the stand-in searches by words."""

    dim = 4

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise AssertionError('the stand-in library embeds nothing')


class _WordMemory:
    """A library that keeps its memories in a JSON file and ranks them by shared words."""

    searched: ClassVar[list[str]] = []

    def __init__(self, folder: Path, embedder: Any) -> None:
        self.path = folder / 'words.json'
        self.items: list[str] = json.loads(self.path.read_text()) if self.path.exists() else []

    def add(self, items: Sequence[tuple[str, float]]) -> list[Any]:
        start = len(self.items)
        self.items += [text for text, _ in items]
        return list(range(start, len(self.items)))

    def search(self, query: str, k: int, as_of: float | None = None) -> list[Any]:
        _WordMemory.searched.append(query)
        words = set(content_words(query))
        shared = [len(words & set(content_words(text))) for text in self.items]
        return sorted(range(len(self.items)), key=lambda i: (-shared[i], -i))[:k]

    def close(self) -> None:
        self.path.write_text(json.dumps(self.items))


def test_robot_cases_run_on_a_copied_background_and_count_the_cases_own_memories(tmp_path: Path) -> None:
    _WordMemory.searched.clear()
    rows = libraries.robot_passes(_WordMemory, _Embedder(), 30, tmp_path)  # type: ignore[arg-type]
    assert {r['split'] for r in rows} == {name for name, _ in SPLITS}
    assert len(rows) == len(_WordMemory.searched)
    # Some cases pass by shared words alone (a rare word), not all: passes() reads the keys.
    assert 0 < sum(r['pass'] for r in rows) < len(rows)
    # Every case saw the same 30 background memories, plus its own, and no other case's.
    background = json.loads((tmp_path / 'background' / 'words.json').read_text())
    assert len(background) == 30
    for split, _ in SPLITS:
        first = json.loads((tmp_path / f'{split}-0' / 'words.json').read_text())
        assert first[:30] == background and 30 < len(first) <= 30 + 8
    # The goal and state go with the question, as sentences of one query.
    cases = [b.case for _, path in SPLITS for b in load(path)]
    assert _WordMemory.searched == ['. '.join(t for t in (c.query, c.goal, c.state) if t) for c in cases]
    assert any(c.goal for c in cases)


def test_locomo_hits_map_each_library_id_back_to_its_turn(tmp_path: Path) -> None:
    texts = ['A: We painted the kitchen yellow.', *(f'B: Filler line number {i}.' for i in range(11)),
             'A: I adopted a grey cat named Pixel.']
    turns = tuple(locomo.Turn(f'D1:{i}', text, float(i), 'session_1', 'A') for i, text in enumerate(texts))
    # The second question's evidence shares no word with it and is the oldest of eleven ties:
    # out of the ten the library returns.
    questions = (locomo.Question('What colour is the kitchen?', 4, frozenset({'D1:0'})),
                 locomo.Question('Where did the cat sleep?', 4, frozenset({'D1:1'})),
                 locomo.Question('What is the grey cat called?', 4, frozenset({'D1:12'})))
    conv = locomo.Conversation('c', turns, questions)
    hits = libraries.locomo_hits(_WordMemory, conv, _Embedder(), tmp_path / 'c')  # type: ignore[arg-type]
    assert hits == [1, 0, 1]


def test_the_doc_section_sets_the_libraries_beside_this_runs_rows() -> None:
    assert libraries.section([], [('BrainMem.retrieve, default', {'all': 0.79})], []) == []
    lib = {'name': 'somelib 1.0 (x)', 'date': '2026-12-05', 'recall': {'all': 0.5, 'temporal': 0.6},
           'robot': [{'split': 'dev', 'pass': True}, {'split': 'dev', 'pass': False}]}
    blind = [{'split': 'dev', 'graph': True, 'vector': False},
             {'split': 'dev', 'graph': True, 'vector': True}]
    lines = libraries.section([lib], [('RRF(vector, BM25), k=60', {'all': 0.66}),
                                      ('  without priors', {'all': 0.7}),
                                      ('BrainMem.retrieve, default', {'all': 0.79})], blind)
    text = '\n'.join(lines)
    assert '| somelib 1.0 (x) | 0.500 | 0.000 | 0.600 |' in text
    assert '| BrainMem.retrieve, default | 0.790 |' in text and 'without priors' not in text
    assert '| somelib 1.0 (x) | 1 / 2 |' in text
    assert '| BrainMem.retrieve, default (this run) | 2 / 2 |' in text
    assert '| plain vector (this run) | 1 / 2 |' in text
