"""Facts end to end on stories written blind: "where is X now?", "what state was X in then?".

``test/data/fact_stories_dev.jsonl`` / ``fact_stories_holdout.jsonl``: 30 stories each,
written from a brief by a writer who did not read or run the code (objects that move,
states that change, two similar things, a thing handed between people, plans and
negations that state nothing), split by their writer before any result was read. ``dev2``
(40 stories) and ``dev3`` (40) were written the same way and their errors read;
``holdout2`` (40) too, and is read only through its scores. Each
story is stored observation by observation into a fresh memory (the default extractor,
no LLM); each question asks :meth:`BrainMem.state_of` and takes the first fact that holds
(at ``as_of`` when given) of the kind asked: a place or holder for "where", any other
attribute for "state". The answer is right when it contains one of the accepted strings from
the start of a word.

``python -m bench.fact_stories`` prints the scores; ``make eval`` writes them to
docs/extraction.md (bench/eval_extraction.py).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brainmem_ros.encoders.base import Embedder
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.facts import PLACE_ATTRIBUTES, Fact

REPO = Path(__file__).resolve().parent.parent
SPLITS: tuple[tuple[str, Path], ...] = (
    ('dev', REPO / 'test' / 'data' / 'fact_stories_dev.jsonl'),
    ('dev 2', REPO / 'test' / 'data' / 'fact_stories_dev2.jsonl'),
    ('dev 3', REPO / 'test' / 'data' / 'fact_stories_dev3.jsonl'),
    ('dev 4', REPO / 'test' / 'data' / 'fact_stories_dev4.jsonl'),
    ('dev 5', REPO / 'test' / 'data' / 'fact_stories_dev5.jsonl'),
    ('dev 6', REPO / 'test' / 'data' / 'fact_stories_dev6.jsonl'),
    ('dev 7', REPO / 'test' / 'data' / 'fact_stories_dev7.jsonl'),
    ('dev 8', REPO / 'test' / 'data' / 'fact_stories_dev8.jsonl'),
    ('dev 9', REPO / 'test' / 'data' / 'fact_stories_dev9.jsonl'),
    ('hold-out', REPO / 'test' / 'data' / 'fact_stories_holdout.jsonl'),
    ('hold-out 2', REPO / 'test' / 'data' / 'fact_stories_holdout2.jsonl'),
    ('hold-out 3', REPO / 'test' / 'data' / 'fact_stories_holdout3.jsonl'),
    ('hold-out 4', REPO / 'test' / 'data' / 'fact_stories_holdout4.jsonl'),
    ('hold-out 5', REPO / 'test' / 'data' / 'fact_stories_holdout5.jsonl'),
)
T0 = 1_760_000_000.0


@dataclass(frozen=True)
class Question:
    """Where ``entity`` is, or what state it is in (at ``as_of`` seconds into the story)."""

    entity: str
    ask: str  # 'where' or 'state'
    as_of: float | None
    accept: tuple[str, ...]


@dataclass(frozen=True)
class Story:
    """Observations (text, seconds into the story) and the questions they answer."""

    name: str
    style: str
    observations: tuple[tuple[str, float], ...]
    questions: tuple[Question, ...]


def load(path: Path) -> list[Story]:
    """The stories of one JSONL file."""
    out: list[Story] = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        questions = tuple(Question(q['entity'], q['ask'],
                                   None if q.get('as_of') is None else float(q['as_of']),
                                   tuple(a.lower() for a in q['accept']))
                          for q in raw['questions'])
        out.append(Story(raw['name'], raw.get('style', ''),
                         tuple((o['text'], float(o['at'])) for o in raw['observations']), questions))
    return out


def answer(mem: BrainMem, q: Question) -> str:
    """The memory's answer: the first fact of the kind asked that holds then ('' if none)."""
    as_of = None if q.as_of is None else T0 + q.as_of
    facts = mem.state_of(q.entity, as_of=as_of)

    def holds(f: Fact) -> bool:
        return f.current if as_of is None else f.valid_at(as_of)

    wanted = [f for f in facts if holds(f) and (f.attribute in PLACE_ATTRIBUTES) == (q.ask == 'where')]
    return wanted[0].value if wanted else ''


def score(path: Path, embedder: Embedder, root: Path) -> list[dict[str, Any]]:
    """One row per question of the file: what the memory answered and whether it is right."""
    rows: list[dict[str, Any]] = []
    for i, story in enumerate(load(path)):
        now = T0 + max(at for _, at in story.observations) + 60
        with BrainMem.open(root / f'{path.stem}-{i}', embedder=embedder, clock=_clock(now)) as mem:
            for text, at in story.observations:
                mem.store(text, stamp=T0 + at, episode_id=story.name)
            for q in story.questions:
                value = answer(mem, q)
                rows.append({'story': story.name, 'style': story.style, 'entity': q.entity, 'ask': q.ask,
                             'then': q.as_of is not None, 'value': value,
                             'right': accepted(value, q.accept)})
    return rows


def accepted(value: str, accept: Sequence[str]) -> bool:
    """Whether ``value`` holds one of the accepted strings from the start of a word: "locked"
    is not in "unlocked", nor "on" in "front door", but "coat hook" is in "coat hooks" and
    "17" in "17C"."""
    low = value.lower()
    return any(re.search(rf'(?<![a-z0-9]){re.escape(a)}', low) for a in accept)


def _clock(now: float) -> Callable[[], float]:
    return lambda: now


def ratio(rows: Sequence[dict[str, Any]]) -> str:
    """Right answers over questions, as 'r / n'."""
    return f'{sum(r["right"] for r in rows)} / {len(rows)}'


def section(results: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The docs section: right answers per split, per kind of question and per style."""
    styles = sorted({r['style'] for rows in results.values() for r in rows})
    kinds = (('where, now', 'where', False), ('where, then', 'where', True),
             ('state, now', 'state', False), ('state, then', 'state', True))
    return [
        '## Facts from stories written blind',
        '',
        'Stories of a robot\'s observations (things that move, states that change, two similar '
        'things, a thing handed between people, plans and negations that state nothing) and '
        'questions about them, written from a brief by a writer who did not read or run the code '
        'and split into dev and hold-out by that writer before any result was read '
        '(`test/data/fact_stories_*.jsonl`, `bench/fact_stories.py`). Each story is stored into a '
        'fresh memory (the default parser, no LLM); each question takes the first fact '
        '`BrainMem.state_of` gives that holds (then, with `as_of`) of the kind asked, a place or '
        'holder for "where" and any other attribute for "state"; right when it contains an '
        'accepted string from the start of a word ("locked" is not in "unlocked"). Only the dev '
        'answers are read when working on facts.',
        '',
        '| split | all | ' + ' | '.join(k for k, _, _ in kinds) + ' | ' + ' | '.join(styles) + ' |',
        '|' + '---|' * (2 + len(kinds) + len(styles)),
        *(f'| {split} | {ratio(rows)} | '
          + ' | '.join(ratio([r for r in rows if r['ask'] == ask and r['then'] == then])
                       for _, ask, then in kinds)
          + ' | ' + ' | '.join(ratio([r for r in rows if r['style'] == s]) for s in styles) + ' |'
          for split, rows in results.items()),
        '',
        'Dev 2 and dev 3 were written later from the same brief, and hold-out 2 after them by another '
        'writer. Dev 3 was first scored as a hold-out: 48 / 117 on the code of the morning of '
        '2026-12-03 and 47 / 117 after that day\'s first rules, so it was read from then on, and '
        'hold-out 2 written to take its place; on the morning\'s code (a checkout of 31cd453) hold-out 2 '
        'scored 36 / 118 and hold-out 37 / 62. Hold-out 3 was written on 2026-12-04 from the same '
        'brief by a third writer, and first scored at 63 / 135 on the code of that morning (d75240b). '
        'Dev 4 was written the same day by a fourth writer, with more log lines and more questions '
        'about the past; it scored 53 / 145 on that code and 58 / 145 with the task records and '
        'device names of the log reader written before it existed, and was read from then on. '
        'Dev 5 was written on 2026-12-05 from the same brief by a fifth writer (eight stories of '
        'each style, questions of the four kinds in equal shares), and first scored at 107 / 158 '
        'on the code of that morning (d3df07c), a figure of how the facts generalise; it was read '
        'from then on. Dev 6 (40 stories) was written the same day by a sixth writer and first '
        'scored at 128 / 195. Dev 7 was written on 2026-12-05 by a seventh writer from a brief that '
        'asked for log lines in the formats of several robot stacks and for settings beyond a home '
        '(an office, a ward, a warehouse, a lab, a workshop); it first scored 116 / 200 on the code '
        'of that evening (2f48fbc), its log stories 10 / 40, and was read from then on. Hold-out 4 '
        'was written the same evening from that brief by an eighth writer, after the rules dev 7 '
        'led to: it scored 101 / 200 on 2f48fbc and 114 / 200 on the code it was added with '
        '(its log stories 9 and 13 / 40), a figure of how far those rules carry. Dev 8 (12 log and '
        '12 narration stories of 40) was written next by a ninth writer and first scored 91 / 200 '
        'on that code; it was read from then on. Only scores of the hold-outs are read.',
        '',
    ]


def run(embedder: Embedder) -> dict[str, list[dict[str, Any]]]:
    """Score both splits."""
    with tempfile.TemporaryDirectory() as tmp:
        return {split: score(path, embedder, Path(tmp)) for split, path in SPLITS if path.exists()}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the scores (``--dev-misses``: and the dev splits' wrong answers)."""
    from brainmem_ros.encoders.models import materialise_models
    from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder

    args = list(sys.argv[1:] if argv is None else argv)
    paths = materialise_models(include_llm=False)
    results = run(OnnxEmbedder(paths.embedder_model, paths.tokenizer))
    print('\n'.join(section(results)))
    if '--dev-misses' in args:
        for r in [r for split, rows in results.items() if split.startswith('dev') for r in rows]:
            if not r['right']:
                print(f'{r["story"]} [{r["style"]}] {r["ask"]}{" then" if r["then"] else ""} '
                      f'{r["entity"]!r}: {r["value"]!r}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
