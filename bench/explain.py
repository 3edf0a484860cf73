"""Why a scenario case ranks as it does: its memories on the routine background, with score parts.

``python -m bench.explain "safety lesson" ["garage door opener" ...] [--distractors 5000]
[--top 10]`` stores each named case of test/scenarios (the scenario suite, or the blind
dev split: ``dev-para-spectacles``) on top of the routine background
that ``make eval`` uses (built once under the bench directory, then copied per case),
asks its question with top_k = ``--top``, and prints every result with the parts of its
score (docs/retrieval.md explains them), then the rank and parts of each memory the case
expects, as far as the first 100 results reach. With no name, it lists the cases.

The diagnosis of a miss starts here: which term is short (vector, lexical, activation),
and what outranks the answer. Not a test and not part of ``make eval``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench import locomo
from bench.common import bench_dir
from brainmem_ros.encoders.models import materialise_models
from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.types import ScoredMemory

sys.path.insert(0, str(locomo.REPO / 'test'))

from scenarios.blind import SPLITS, load
from scenarios.cases import CASES, Case
from scenarios.runner import ask, build_background, case_now, store_case

# The furthest a Retrieve looks (RetrievalConfig.max_top_k): an expected memory beyond it
# is reported as not found.
DEEPEST = 100


def line(rank: int, key: str, hit: ScoredMemory) -> str:
    """One result: rank, the case's key for it ('' for background), score and its parts."""
    p = hit.parts
    return (f'{rank:3d} {key:8s} {hit.score:.3f}  rel {p.relevance:.3f}  vec {p.vector:.2f}  '
            f'lex {p.lexical:.2f}  ent {p.entity:.2f}  act {p.activation:.2f}  prior {p.prior:.2f}  '
            f'typ {p.typicality:.2f}  red {p.redundancy:.2f} | {hit.unit.text[:80]}')


def explain(case: Case, background: Path, embedder: OnnxEmbedder, root: Path, top: int) -> None:
    """Store ``case`` on a copy of ``background`` and print its ranking."""
    path, deep_path = root / 'case', root / 'case-deep'
    for p in (path, deep_path):
        shutil.rmtree(p, ignore_errors=True)
    shutil.copytree(background, path)
    now = case_now(case)
    with BrainMem.open(path, embedder=embedder, clock=lambda: now) as mem:
        keys = store_case(mem, case)
    # A Retrieve marks what it returns as used (their recency rises): the long list is
    # asked of a copy made before the short one was.
    shutil.copytree(path, deep_path)

    def ask_of(store: Path, top_k: int) -> list[ScoredMemory]:
        with BrainMem.open(store, embedder=embedder, clock=lambda: now) as mem:
            return ask(mem, case, top_k)

    print(f'== {case.name}: {case.query!r} goal={case.goal!r} state={case.state!r} '
          f'k={case.k} expects {case.expect}')
    for rank, hit in enumerate(ask_of(path, top), 1):
        print(line(rank, keys.get(hit.unit.id, ''), hit))
    found = {keys[h.unit.id]: (rank, h) for rank, h in enumerate(ask_of(deep_path, DEEPEST), 1)
             if h.unit.id in keys}
    print(f"   the case's memories (ranks among the first {DEEPEST}; they can differ a little from "
          'the short list, since near-copies step back within the list asked for):')
    for m in case.memories:
        if m.key in found:
            print(line(found[m.key][0], m.key, found[m.key][1]))
        else:
            print(f'  - {m.key:8s} not in the first {DEEPEST} | {m.text[:80]}')


def main(argv: Sequence[str] | None = None) -> None:
    """Explain the named cases (or list them)."""
    parser = argparse.ArgumentParser(prog='python -m bench.explain')
    parser.add_argument('cases', nargs='*', help='case names (test/scenarios/cases.py, blind dev cases)')
    parser.add_argument('--distractors', type=int, default=5000)
    parser.add_argument('--top', type=int, default=10)
    args = parser.parse_args(argv)
    # The blind dev splits' cases too; the hold-out's are never read (bench/blind_cases.py).
    dev = [b.case for split, path in SPLITS if split.startswith('dev') for b in load(path)]
    by_name = {c.name: c for c in [*CASES, *dev]}
    if not args.cases:
        print('\n'.join(by_name))
        return
    unknown = [n for n in args.cases if n not in by_name]
    if unknown:
        parser.error(f'no such case: {", ".join(unknown)} (run without names to list them)')
    paths = materialise_models(include_llm=False)
    embedder = OnnxEmbedder(paths.embedder_model, paths.tokenizer)
    background = bench_dir() / 'stores' / f'routine{args.distractors}'
    built = background.with_name(background.name + '.built')  # beside it: not copied per case
    if not built.exists():
        shutil.rmtree(background, ignore_errors=True)
        print(f'building the routine background ({args.distractors} observations) in {background} ...',
              flush=True)
        build_background(background, embedder, args.distractors)
        built.touch()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases:
            explain(by_name[name], background, embedder, Path(tmp), args.top)


if __name__ == '__main__':
    main()
