"""Store throughput of this checkout against an earlier revision, run in turn.

``python -m bench.store_ab REV [--count 1000] [--pairs 5]``

A regression check for the Store path: "does this code store as fast as REV did?". It
checks REV out into a temporary git worktree (this checkout's ``.venv``, models and
generated interfaces serve both), then, ``--pairs`` times, runs the same measurement in
a fresh process of each tree, REV first: a new store in a temporary directory, 64
warm-up observations, then ``--count`` observations of the benchmark corpus
(``bench/corpus.py``, units from 20,000 on, as ``bench.ingest_rate`` sends) stored one
by one with ``BrainMem.store`` (rule extractor, encoder, dedup and links, reflection, a
commit each). It prints the process CPU time per observation and the wall-time rate of
each run and the mean of each side. Alternating pairs, on the same machine in the same
minutes, is what makes two figures comparable here: this machine is shared, and the
same code measures 10-20% apart from one hour to the next.

The measurement uses only what both trees have (``BrainMem.open``/``store``,
``bench.corpus.Corpus``, ``bench.common.load_embedder``), so REV can be any revision
since those existed. Not part of ``make bench``: it answers a question about a change.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.common import REPO

# Run with the tree under test as the working directory (its packages come first).
_MEASURE = '''
import json, sys, tempfile, time
sys.path.insert(0, '.')
from bench.common import load_embedder
from bench.corpus import Corpus
from brainmem_ros.memory import BrainMem
count = int(sys.argv[1])
embedder = load_embedder()
units = [u for u, _ in Corpus(embedder).units(20000, 20064 + count)]
with tempfile.TemporaryDirectory() as d, BrainMem.open(d, embedder=embedder) as mem:
    for u in units[:64]:
        mem.store(u.text, episode_id=u.episode_id)
    cpu, wall = time.process_time(), time.perf_counter()
    for u in units[64:]:
        mem.store(u.text, episode_id=u.episode_id)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({'cpu_ms': 1000 * cpu / count, 'rate': count / wall}))
'''


def measure(tree: Path, count: int) -> dict[str, float]:
    """One run in a fresh process of ``tree``: CPU ms per observation and observations/s."""
    out = subprocess.run([sys.executable, '-c', _MEASURE, str(count)], cwd=tree, check=True,
                         capture_output=True, text=True).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Alternate runs of REV and this checkout; print each run and the means."""
    parser = argparse.ArgumentParser(prog='python -m bench.store_ab', description=__doc__.split('\n')[0])
    parser.add_argument('rev', help='the revision to compare with (a commit, tag or branch)')
    parser.add_argument('--count', type=int, default=1000, help='observations stored per run')
    parser.add_argument('--pairs', type=int, default=5)
    args = parser.parse_args(argv)
    runs: dict[str, list[dict[str, float]]] = {args.rev: [], 'this checkout': []}
    with tempfile.TemporaryDirectory(prefix='store-ab-') as tmp:
        old = Path(tmp) / 'tree'
        subprocess.run(['git', 'worktree', 'add', '--detach', '--quiet', str(old), args.rev],
                       cwd=REPO, check=True)
        try:
            for pair in range(1, args.pairs + 1):
                for side, tree in ((args.rev, old), ('this checkout', REPO)):
                    r = measure(tree, args.count)
                    runs[side].append(r)
                    print(f'pair {pair} {side}: {r["cpu_ms"]:.2f} CPU ms/obs, {r["rate"]:.0f} obs/s',
                          flush=True)
        finally:
            subprocess.run(['git', 'worktree', 'remove', '--force', str(old)], cwd=REPO, check=False)
    for side, rs in runs.items():
        cpu = statistics.mean(r['cpu_ms'] for r in rs)
        rate = statistics.mean(r['rate'] for r in rs)
        print(f'{side}: mean {cpu:.2f} CPU ms/obs, {rate:.0f} obs/s over {len(rs)} runs')
    before, after = (statistics.mean(r['cpu_ms'] for r in runs[s]) for s in runs)
    print(f'CPU per observation {100 * (after / before - 1):+.1f}% against {args.rev}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
