"""The LoCoMo development split as memories and questions, and the baselines it is scored on.

Protocol (the one in ../shared/tools/recall_probe.py and the LoCoMo literature): one
memory per dialogue turn, ``"{speaker}: {text}"`` plus ``" (shares a photo: {caption})"``,
stamped with its session's date (30 s apart within a session), episode = session; one
retrieve(question, top_k=10) per question of categories 1-4; a hit when any evidence turn
is in the top 10. LoCoMo: Maharana et al., ACL 2024 (CC BY-NC 4.0; evaluation only, never
shipped in the package).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from brainmem_ros.encoders.base import Embedder
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.config import MemoryConfig
from brainmem_ros.memory.lexicon import content_words
from brainmem_ros.memory.retrieval import Query, Retriever, fts_expression
from brainmem_ros.memory.types import UnitFilter, UnitType

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / 'shared' / 'data' / 'locomo_dev' / 'locomo_dev.json'
CATEGORIES = {1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop'}
TOP_K = 10


@dataclass(frozen=True)
class Turn:
    """One dialogue turn, as it is stored."""

    dia_id: str
    text: str
    stamp: float
    session: str
    speaker: str


@dataclass(frozen=True)
class Question:
    """One question of categories 1-4 with its evidence turns."""

    text: str
    category: int
    evidence: frozenset[str]


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo conversation: its turns and its questions."""

    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def _stamp(text: str) -> float:
    for fmt in ('%I:%M %p on %d %B, %Y', '%I:%M %p on %d %b, %Y'):
        try:
            return datetime.strptime(text.strip(), fmt).timestamp()
        except ValueError:
            pass
    return 0.0


def load(path: Path = DATA) -> list[Conversation]:
    """The conversations of the split."""
    out: list[Conversation] = []
    for conv in json.loads(path.read_text()):
        c = conv['conversation']
        keys = sorted((int(m.group(1)), k) for k in c if (m := re.fullmatch(r'session_(\d+)', k)))
        turns: list[Turn] = []
        for _, key in keys:
            base = _stamp(c.get(f'{key}_date_time', ''))
            for i, turn in enumerate(c[key]):
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get('blip_caption'):
                    text += f" (shares a photo: {turn['blip_caption']})"
                turns.append(Turn(turn['dia_id'], text, base + i * 30, key, turn['speaker']))
        questions = tuple(Question(qa['question'], int(qa['category']), frozenset(qa.get('evidence', [])))
                          for qa in conv['qa'] if int(qa['category']) != 5)
        out.append(Conversation(conv['sample_id'], tuple(turns), questions))
    return out


@dataclass
class Built:
    """A conversation stored in a BrainMem directory, and which unit holds which turn."""

    conversation: Conversation
    path: Path
    dia_of: dict[int, set[str]]


def build(conv: Conversation, path: Path, embedder: Embedder) -> Built:
    """Store every turn of ``conv`` under ``path`` (the default Store path)."""
    dia_of: dict[int, set[str]] = {}
    with BrainMem.open(path, embedder=embedder) as mem:
        for turn in conv.turns:
            unit = mem.store(turn.text, stamp=turn.stamp, episode_id=turn.session, source=turn.speaker)
            dia_of.setdefault(unit.id, set()).add(turn.dia_id)
    return Built(conv, path, dia_of)


Ranker = Callable[[BrainMem, Question], Sequence[int]]


def score(built: Sequence[Built], embedder: Embedder, ranker: Ranker) -> dict[str, list[int]]:
    """Hits (1/0) per question, keyed by conversation id, in question order."""
    out: dict[str, list[int]] = {}
    for b in built:
        with BrainMem.open(b.path, embedder=embedder) as mem:
            out[b.conversation.sample_id] = [hit(ranker(mem, q), b.dia_of, q)
                                             for q in b.conversation.questions]
    return out


def hit(ranked: Iterable[Any], dia_of: Mapping[Any, set[str]], q: Question) -> int:
    """1 when an evidence turn of ``q`` is among the first :data:`TOP_K` of ``ranked`` (memory ids,
    each standing for the turns ``dia_of`` gives), else 0."""
    got: set[str] = set()
    for key in list(ranked)[:TOP_K]:
        got |= dia_of.get(key, set())
    return int(bool(got & q.evidence))


def brainmem_ranker(config: MemoryConfig | None = None, *, types: frozenset[UnitType] | None = None
                    ) -> Ranker:
    """``BrainMem.retrieve`` with ``config``'s retrieval options, without access side effects."""

    def rank(mem: BrainMem, q: Question) -> list[int]:
        cfg = (config or mem.config).retrieval
        retriever = Retriever(mem.store_db, mem.index, mem.embedder, cfg, adjacency=mem.adjacency)
        return [r.unit.id for r in retriever.run(Query(q.text, top_k=TOP_K, types=types), now=mem.clock())]

    return rank


def _observation_ids(mem: BrainMem) -> set[int]:
    return set(mem.store_db.filtered_ids(UnitFilter(types=frozenset({UnitType.OBSERVATION})),
                                         limit=10**9) or [])


def vector_ranker(n: int = TOP_K) -> Ranker:
    """Plain FAISS top-n over the stored observations, with the store's own encoder."""

    def rank(mem: BrainMem, q: Question) -> list[int]:
        allowed = _observation_ids(mem)
        _, ids = mem.index.search(mem.embedder.embed([q.text]), 2 * n + 50)
        return [int(i) for i in ids[0] if int(i) in allowed][:n]

    return rank


def bm25_ranker(n: int = TOP_K) -> Ranker:
    """BM25 alone: the store's FTS5 index (porter stemming), stop-words dropped from the query."""

    def rank(mem: BrainMem, q: Question) -> list[int]:
        words = [w for w in content_words(q.text) if len(w) > 2 or w.isdigit()]
        if not words:
            return []
        return [uid for uid, _ in mem.store_db.fts_scored(fts_expression(words), limit=n,
                                                          unit_filter=UnitFilter())]

    return rank


def rrf_ranker(k: float = 60.0, depth: int = 100) -> Ranker:
    """Reciprocal-rank fusion of the vector and BM25 lists (each ``depth`` long)."""
    vec, lex = vector_ranker(depth), bm25_ranker(depth)

    def rank(mem: BrainMem, q: Question) -> list[int]:
        fused: dict[int, float] = {}
        for ranking in (vec(mem, q), lex(mem, q)):
            for r, uid in enumerate(ranking):
                fused[uid] = fused.get(uid, 0.0) + 1.0 / (k + r + 1)
        return sorted(fused, key=lambda i: -fused[i])

    return rank


def summarise(hits: dict[str, list[int]], convs: Sequence[Conversation]) -> dict[str, float]:
    """Recall overall and per category."""
    per: dict[int, list[int]] = {}
    for conv in convs:
        for q, h in zip(conv.questions, hits[conv.sample_id], strict=True):
            per.setdefault(q.category, []).append(h)
    every = [h for v in per.values() for h in v]
    out = {'all': float(np.mean(every)) if every else 0.0}
    out.update({CATEGORIES[c]: float(np.mean(v)) for c, v in sorted(per.items())})
    return out
