"""Offline memory libraries from PyPI on the same data, given the same encoder.

``python -m bench.eval_recall --libraries`` (``make eval-libraries``) runs each library
installed from requirements-libraries.txt on two protocols:

- the LoCoMo dev split of bench/locomo.py: one memory per turn (the same text), one
  search of ten per question, a hit when an evidence turn is among the ten;
- the robot cases written blind (test/scenarios/blind.py) on the routine background of
  the scenario suite: the background stored once per library and copied per case, the
  case's memories added, its question asked once (with its goal and state appended, since
  no library takes them apart; ``as_of`` where the library has it).

Each library is handed the default encoder of this package through its own embedder
interface, so the comparison is of what each does with the same vectors: its lexical
search, its fusion and its ranking. Search settings are each library's defaults.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from bench import locomo
from brainmem_ros.encoders.base import Embedder

sys.path.insert(0, str(locomo.REPO / 'test'))

from scenarios.blind import SPLITS, load, passes
from scenarios.routine import routine
from scenarios.runner import T0


class LibraryMemory(Protocol):
    """What the comparison needs of a library: add memories, search, close."""

    def add(self, items: Sequence[tuple[str, float]]) -> list[Any]:
        """Store (text, stamp) pairs; the id each is found by (a kept copy's, for a dropped one)."""
        ...

    def search(self, query: str, k: int, as_of: float | None = None) -> list[Any]:
        """The ids of the best ``k`` memories for ``query``."""
        ...

    def close(self) -> None:
        """Write everything out."""
        ...


def _lists(embedder: Embedder, texts: Iterable[str]) -> list[list[float]]:
    return [list(map(float, row)) for row in embedder.embed(list(texts))]


class _ListEmbedder:
    """agentrecall-db's embedder protocol: ``dim`` and ``embed(texts)`` as lists of floats."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.dim = embedder.dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        return _lists(self._embedder, texts)


class _CallableEmbedder:
    """ariadne-memory's: a callable text -> vector with ``dim`` (and ``embed_batch``)."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.dim = embedder.dim

    def __call__(self, text: str) -> list[float]:
        return _lists(self._embedder, [text])[0]

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        return _lists(self._embedder, texts)


class AgentRecall:
    """agentrecall-db: FTS5 and sqlite-vec in one SQLite file, fused by its ``search``."""

    def __init__(self, folder: Path, embedder: Embedder) -> None:
        import agentrecall.store
        import pysqlite3.dbapi2
        from agentrecall import Memory

        # Its vectors live in the sqlite-vec extension, which the standard library's sqlite3
        # of this Python cannot load (built without extension loading); pysqlite3 is the
        # same module with it.
        agentrecall.store.sqlite3 = pysqlite3.dbapi2  # type: ignore[attr-defined]
        self._memory = Memory(folder / 'agentrecall.db', embeddings=True, embedder=_ListEmbedder(embedder))

    def add(self, items: Sequence[tuple[str, float]]) -> list[Any]:
        # It stamps a memory with the time it is added; it takes no time of the event.
        return [r.id for r in self._memory.add_many([{'content': text} for text, _ in items])]

    def search(self, query: str, k: int, as_of: float | None = None) -> list[Any]:
        return [h.id for h in self._memory.search(query, k=k)]

    def close(self) -> None:
        self._memory.close()


class Ariadne:
    """ariadne-memory: FAISS and FTS5 fused by RRF, with its own MinHash deduplication."""

    def __init__(self, folder: Path, embedder: Embedder) -> None:
        from arriadne import AriadneConfig, AriadneMemory

        self._memory = AriadneMemory(AriadneConfig(db_path=folder / 'ariadne.db', embedding_dim=embedder.dim),
                                     embedder=_CallableEmbedder(embedder))

    def add(self, items: Sequence[tuple[str, float]]) -> list[Any]:
        # Valid from the moment it was made, so that its ``as_of`` can tell what was known then.
        results = self._memory.remember_many([{'content': text, 'event_at': stamp, 'valid_from': stamp}
                                              for text, stamp in items])
        # A memory it found already stored (the same text) is found through the one it kept.
        return [r.get('memory_id') or r.get('duplicate_of') for r in results]

    def search(self, query: str, k: int, as_of: float | None = None) -> list[Any]:
        return [h.get('id') for h in self._memory.recall(query, k=k, as_of=as_of)]

    def close(self) -> None:
        self._memory.close()


# (PyPI distribution, what it is, how to open one in a folder).
LIBRARIES: tuple[tuple[str, str, Callable[[Path, Embedder], LibraryMemory]], ...] = (
    ('agentrecall-db', 'FTS5 + sqlite-vec, fused', AgentRecall),
    ('ariadne-memory', 'FAISS + FTS5, RRF', Ariadne),
)


def locomo_hits(open_memory: Callable[[Path, Embedder], LibraryMemory], conv: locomo.Conversation,
                embedder: Embedder, folder: Path) -> list[int]:
    """Hits (1/0) per question of ``conv``, in question order."""
    folder.mkdir(parents=True)
    memory = open_memory(folder, embedder)
    try:
        dia_of: dict[Any, set[str]] = {}
        for key, turn in zip(memory.add([(t.text, t.stamp) for t in conv.turns]), conv.turns, strict=True):
            dia_of.setdefault(key, set()).add(turn.dia_id)
        return [locomo.hit(memory.search(q.text, locomo.TOP_K), dia_of, q) for q in conv.questions]
    finally:
        memory.close()


def robot_passes(open_memory: Callable[[Path, Embedder], LibraryMemory], embedder: Embedder,
                 distractors: int, root: Path) -> list[dict[str, Any]]:
    """Each blind case on ``distractors`` routine memories: its split, kind and whether it passes."""
    background = root / 'background'
    background.mkdir(parents=True)
    memory = open_memory(background, embedder)
    try:
        memory.add([(item.text, item.stamp) for item in routine(distractors)])
    finally:
        memory.close()
    rows: list[dict[str, Any]] = []
    for split, path in SPLITS:
        for i, blind in enumerate(load(path)):
            case = blind.case
            folder = root / f'{split}-{i}'
            shutil.copytree(background, folder)
            memory = open_memory(folder, embedder)
            try:
                ids = memory.add([(m.text, T0 + m.at) for m in case.memories])
                keys = {key: m.key for key, m in zip(ids, case.memories, strict=True)}
                query = '. '.join(t for t in (case.query, case.goal, case.state) if t)
                as_of = None if case.as_of is None else T0 + case.as_of
                ranked = tuple(keys.get(key, '') for key in memory.search(query, case.k, as_of)[:case.k])
            finally:
                memory.close()
            rows.append({'split': split, 'kind': blind.kind, 'name': case.name, 'pass': passes(case, ranked)})
    return rows


def library_rows(convs: Sequence[locomo.Conversation], embedder: Embedder, distractors: int
                 ) -> list[dict[str, Any]]:
    """One row per installed library: name and version, LoCoMo recall per category, robot cases."""
    rows: list[dict[str, Any]] = []
    for dist, what, open_memory in LIBRARIES:
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            print(f'{dist} is not installed (make eval-libraries installs it); left out', flush=True)
            continue
        t0 = time.perf_counter()
        hits: dict[str, list[int]] = {}
        with tempfile.TemporaryDirectory() as tmp:
            for conv in convs:
                hits[conv.sample_id] = locomo_hits(open_memory, conv, embedder, Path(tmp) / conv.sample_id)
            robot = (robot_passes(open_memory, embedder, distractors, Path(tmp) / 'robot')
                     if distractors else [])
        rows.append({'name': f'{dist} {version} ({what})', 'recall': locomo.summarise(hits, convs),
                     'robot': robot, 'seconds': time.perf_counter() - t0})
        print(rows[-1]['name'], rows[-1]['recall'],
              {s: sum(r['pass'] for r in robot if r['split'] == s) for s, _ in SPLITS}, flush=True)
    return rows


def _row(name: str, figures: dict[str, float]) -> str:
    cols = ['all', *locomo.CATEGORIES.values()]
    return f'| {name} | ' + ' | '.join(f'{figures.get(c, 0.0):.3f}' for c in cols) + ' |'


def section(libraries: Sequence[dict[str, Any]], rows: Sequence[tuple[str, dict[str, float]]],
            blind: Sequence[dict[str, Any]]) -> list[str]:
    """The lines of docs/retrieval.md that compare the libraries with this run's rows."""
    if not libraries:
        return []
    ours = [(name.strip(), r) for name, r in rows
            if name.strip() in ('RRF(vector, BM25), k=60', 'BrainMem.retrieve, default')]
    cols = ['all', *locomo.CATEGORIES.values()]
    splits = [s for s, _ in SPLITS]

    def robot(cases: Sequence[dict[str, Any]], column: str) -> str:
        return ' | '.join(f'{sum(r[column] for r in cases if r["split"] == s)} / '
                          f'{sum(1 for r in cases if r["split"] == s)}' for s in splits)

    lines = [
        '### Offline memory libraries, same encoder',
        '',
        'The memory libraries on PyPI that run offline, on the same protocol and given the same '
        'encoder (the default above) through their own embedder interfaces, with their default '
        'search settings (`bench/libraries.py`; `make eval-libraries`, which installs them from '
        f'requirements-libraries.txt, on {libraries[0].get("date", "")}; kept in '
        'docs/retrieval_libraries.json). The last rows are this run\'s, from the table above.',
        '',
        '| ranking | ' + ' | '.join(cols) + ' |',
        '|---' * (len(cols) + 1) + '|',
        *(_row(lib['name'], lib['recall']) for lib in libraries),
        *(_row(name, r) for name, r in ours),
        '',
    ]
    if blind and all(lib.get('robot') for lib in libraries):
        lines += [
            'The same libraries on the robot cases written blind (the section below): the routine '
            'background stored once per library, the case\'s memories added, its question asked '
            'once with its goal and state appended (no library takes them apart), `as_of` passed '
            'where the library has it (ariadne-memory). Cases passed:',
            '',
            '| ranking | ' + ' | '.join(splits) + ' |',
            '|---' * (len(splits) + 1) + '|',
            *(f'| {lib["name"]} | {robot(lib["robot"], "pass")} |' for lib in libraries),
            f'| BrainMem.retrieve, default (this run) | {robot(blind, "graph")} |',
            f'| plain vector (this run) | {robot(blind, "vector")} |',
            '',
        ]
    return lines
