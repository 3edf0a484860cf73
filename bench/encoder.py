"""The default encoder against the packaged one it is derived from: speed and agreement.

``python -m bench.encoder`` records into the results file; :mod:`bench.report` renders
it in docs/benchmarks.md. Texts: 250 sentences of the corpus vocabulary and 50 planner
questions with their goals (deterministic). Speed is one thread, one text per call and
in batches of 32, after a warm-up; agreement is the cosine between the two models'
vectors of each text, and the share of each text's 10 nearest neighbours (among the
300) that both models find.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bench.common import load_average, record
from bench.corpus import queries, vocabulary
from brainmem_ros.encoders.models import materialise_models
from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder

N_VOCAB = 250
N_QUERIES = 50


def texts() -> list[str]:
    """The deterministic sample of household sentences and planner questions."""
    vocab = [s.text for s in vocabulary()]
    random.Random(1).shuffle(vocab)
    return vocab[:N_VOCAB] + [f'{q.query} {q.goal}'.strip() for q in queries(N_QUERIES)]


def speed_ms(model: Path, tokenizer: Path, sample: list[str], *, batch: int) -> float:
    """Milliseconds per text, best of 3 passes (the machine is shared)."""
    embedder = OnnxEmbedder(model, tokenizer, cache_size=0, batch_size=batch)
    embedder.embed(sample[:8])
    best = float('inf')
    for _ in range(3):
        start = time.perf_counter()
        if batch == 1:
            for text in sample:
                embedder.embed([text])
        else:
            embedder.embed(sample)
        best = min(best, (time.perf_counter() - start) / len(sample) * 1e3)
    return best


def top10_overlap(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    """Mean share of each row's 10 nearest rows (cosine) that both matrices agree on."""
    sa, sb = a @ a.T, b @ b.T
    np.fill_diagonal(sa, -np.inf)
    np.fill_diagonal(sb, -np.inf)
    na, nb = np.argsort(-sa, axis=1)[:, :10], np.argsort(-sb, axis=1)[:, :10]
    return float(np.mean([len(set(x) & set(y)) / 10 for x, y in zip(na, nb, strict=True)]))


def main(argv: list[str] | None = None) -> None:
    """Measure and record."""
    argparse.ArgumentParser(prog='python -m bench.encoder').parse_args(argv)
    paths = materialise_models(include_llm=False)
    sample = texts()
    load = load_average()
    source = OnnxEmbedder(paths.source_embedder, paths.tokenizer, cache_size=0).embed(sample)
    derived = OnnxEmbedder(paths.embedder_model, paths.tokenizer, cache_size=0).embed(sample)
    cosine = np.sum(source * derived, axis=1)
    result = {
        'texts': len(sample),
        'packaged_single_ms': speed_ms(paths.source_embedder, paths.tokenizer, sample, batch=1),
        'packaged_batch_ms': speed_ms(paths.source_embedder, paths.tokenizer, sample, batch=32),
        'default_single_ms': speed_ms(paths.embedder_model, paths.tokenizer, sample, batch=1),
        'default_batch_ms': speed_ms(paths.embedder_model, paths.tokenizer, sample, batch=32),
        'cosine_min': float(cosine.min()), 'cosine_mean': float(cosine.mean()),
        'top10_overlap': top10_overlap(source, derived),
        'load': (load + load_average()) / 2,
    }
    record('encoder', 'default', result)
    for key, value in result.items():
        print(f'{key}: {value:.3f}' if isinstance(value, float) else f'{key}: {value}')


if __name__ == '__main__':
    main()
