"""Runs a scenario case against a fresh memory: graph retrieval and plain vector top-k."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from brainmem_ros.encoders.base import Embedder
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.types import ScoredMemory

from .cases import DISTRACTORS, Case
from .routine import routine

T0 = 1_760_000_000.0


@dataclass(frozen=True)
class Outcome:
    """What came back for one case."""

    case: Case
    graph: tuple[str, ...]       # keys (or '' for distractors) in graph-retrieval order
    vector: tuple[str, ...]      # keys in plain vector top-k order

    def recall(self, ranked: tuple[str, ...]) -> float:
        """Fraction of expected keys found in ``ranked``."""
        return sum(k in ranked for k in self.case.expect) / len(self.case.expect)


def build_background(path: Path, embedder: Embedder, n: int) -> Path:
    """A store of ``n`` routine observations over four weeks (copied by each case)."""
    with BrainMem.open(path, embedder=embedder, clock=lambda: T0) as mem:
        for item in routine(n):
            mem.store(item.text, stamp=item.stamp, episode_id=item.episode_id)
    return path


def passes(case: Case, ranked: tuple[str, ...]) -> bool:
    """Every expected key in ``ranked`` (the top k), no absent one, and the order asked."""
    return (all(k in ranked for k in case.expect) and not any(k in ranked for k in case.absent)
            and all(a in ranked and b in ranked and ranked.index(a) < ranked.index(b) for a, b in case.above))


def case_now(case: Case) -> float:
    """The clock of a case's memory: a minute after its last memory."""
    return T0 + max(m.at for m in case.memories) + 60


def store_case(mem: BrainMem, case: Case) -> dict[int, str]:
    """Store the case's memories; returns their unit ids with the case's key of each."""
    return {mem.store(m.text, stamp=T0 + m.at, episode_id=m.episode, type=m.type).id: m.key
            for m in case.memories}


def ask(mem: BrainMem, case: Case, top_k: int) -> list[ScoredMemory]:
    """The case's question (with its goal, state and as_of) as one Retrieve of ``top_k``."""
    as_of = None if case.as_of is None else T0 + case.as_of
    return mem.retrieve(case.query, goal=case.goal or None, state=case.state or None,
                        top_k=top_k, as_of=as_of)


def run_case(case: Case, path: Path, embedder: Embedder, *, background: Path | None = None) -> Outcome:
    """Store the distractors and the case's memories, then ask the question both ways.

    ``background``: a store made by :func:`build_background`, copied under ``path``;
    without one, the case is stored on the twelve household distractors alone.
    """
    now = case_now(case)
    if background is not None:
        shutil.copytree(background, path)
    with BrainMem.open(path, embedder=embedder, clock=lambda: now) as mem:
        if background is None:
            for i, text in enumerate(DISTRACTORS):
                mem.store(text, stamp=T0 - 86400 + 600 * i, episode_id='background')
        keys = store_case(mem, case)
        hits = ask(mem, case, case.k)
        graph = tuple(keys.get(h.unit.id, '') for h in hits)
        parts = [(t, w) for t, w in ((case.query, 1.0), (case.goal, 0.85), (case.state, 0.6)) if t]
        texts = [t for t, _ in parts]
        weights = np.asarray([w for _, w in parts], dtype=np.float32)
        qvecs = embedder.embed(texts)
        scores, ids = mem.index.search(qvecs, case.k * 2)
        best: dict[int, float] = {}
        for row, w in enumerate(weights):
            for s, i in zip(scores[row], ids[row], strict=True):
                if i >= 0:
                    best[int(i)] = max(best.get(int(i), -1.0), float(w * s))
        top = sorted(best, key=lambda i: -best[i])[:case.k]
        vector = tuple(keys.get(i, '') for i in top)
    return Outcome(case, graph, vector)
