"""Store latency with enrichment on: it must not grow with the LLM's speed → docs/enrichment.md.

Stores the same observations into fresh memories with no LLM, with stand-in LLMs that
take 0.2 s and 2 s per observation, and with the real Gemma 3 270M, and reports Store
latency percentiles (the LLM works in the background thread meanwhile).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from brainmem_ros.encoders.llama import LlamaExtractor
from brainmem_ros.encoders.models import materialise_models
from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder
from brainmem_ros.encoders.rules import RuleExtractor
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.types import Extraction

REPO = Path(__file__).resolve().parent.parent
TEXTS = [line.split('"text": "')[1].split('"')[0] for line in
         (REPO / 'test' / 'data' / 'labelled_observations.jsonl').read_text().splitlines() if line.strip()]


class SlowLlm:
    """Stand-in LLM with a fixed delay (the rule extraction as its answer)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.rules = RuleExtractor()

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        time.sleep(self.seconds)
        return self.rules.extract(text, known_entities=known_entities)


def measure(name: str, llm: object | None, embedder: OnnxEmbedder, n: int) -> tuple[str, list[float], int]:
    """Store ``n`` observations; return Store latencies (ms) and the queue depth at the end."""
    with tempfile.TemporaryDirectory() as tmp, \
            BrainMem.open(Path(tmp) / 'm', embedder=embedder, llm_extractor=llm) as mem:  # type: ignore[arg-type]
        latencies = []
        for i in range(n):
            start = time.perf_counter()
            # The run name in the text keeps the embedder's cache from serving later runs.
            mem.store(f'{TEXTS[i % len(TEXTS)]} ({name}, {i})', episode_id='bench')
            latencies.append((time.perf_counter() - start) * 1000)
        depth = mem.stats().queue_depth
    return name, latencies, depth


def main(argv: list[str] | None = None) -> None:
    """Run and write docs/enrichment.md."""
    parser = argparse.ArgumentParser()
    parser.add_argument('-n', type=int, default=100)
    args = parser.parse_args(argv)
    paths = materialise_models()
    embedder = OnnxEmbedder(paths.embedder_model, paths.tokenizer)
    measure('warm-up', None, embedder, 20)
    runs = [measure('no LLM', None, embedder, args.n),
            measure('stand-in LLM, 0.2 s/observation', SlowLlm(0.2), embedder, args.n),
            measure('stand-in LLM, 2 s/observation', SlowLlm(2.0), embedder, args.n),
            measure('Gemma 3 270M (llama.cpp, 1 thread)', LlamaExtractor(paths.llm, n_threads=1),
                    embedder, args.n)]
    lines = ['# Store latency with enrichment on', '',
             f'`python -m bench.enrichment_latency -n {args.n}` on {time.strftime("%Y-%m-%d")} '
             '(2-core shared machine; SQLite synchronous=FULL). Each row stores the same '
             f'{args.n} observations into a fresh memory; the LLM enriches in a background thread.',
             '', '| enrichment | Store p50 ms | Store p99 ms | max ms | queue left at the end |',
             '|---|---|---|---|---|']
    for name, lat, depth in runs:
        ordered = sorted(lat)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        lines.append(f'| {name} | {statistics.median(lat):.1f} | {p99:.1f} | {max(lat):.1f} | {depth} |')
    lines.append('')
    (REPO / 'docs' / 'enrichment.md').write_text('\n'.join(lines))
    print('\n'.join(lines))


if __name__ == '__main__':
    main()
