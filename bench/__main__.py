"""``make bench``: run every benchmark and regenerate its page under docs/.

``python -m bench [--sizes 10000 100000 1000000] [--skip-ros] [--only report]``: the
encoder comparison, then the scaling benchmarks, the topic ingest rate, the peers
and the what-if prototypes at each size, then docs/benchmarks.md and its plots.
Stores are built once and reused (see bench/common.py); the 1M store takes about
10 minutes to build and about 5 GB of disk.
"""

from __future__ import annotations

import argparse
import sys

from bench import (
    encoder,
    enrichment_latency,
    eval_extraction,
    fleet,
    fleet_locomo,
    ingest_rate,
    peers,
    perf,
    report,
    whatif,
)

# Retrieve's p99 moves by several ms between runs on a shared machine: judged on each of these.
RETRIEVE_REPEATS = 5
STEPS = ('encoder', 'extraction', 'enrichment', 'perf', 'ingest', 'peers', 'whatif', 'fleet', 'fleet-recall',
         'report')


def main(argv: list[str] | None = None) -> int:
    """Run all benchmarks."""
    parser = argparse.ArgumentParser(prog='python -m bench')
    parser.add_argument('--sizes', nargs='+', default=['10000', '100000', '1000000'])
    parser.add_argument('--skip-ros', action='store_true', help='no end-to-end service numbers')
    parser.add_argument('--only', nargs='+', choices=STEPS, default=list(STEPS))
    args = parser.parse_args(argv)
    sizes = [str(int(s)) for s in args.sizes]
    if 'encoder' in args.only:
        encoder.main([])
    if 'extraction' in args.only:
        eval_extraction.main(['--llm-threads', '1'])
    if 'enrichment' in args.only:
        enrichment_latency.main([])
    if 'perf' in args.only:
        perf.main(['--sizes', *sizes, '--repeats', str(RETRIEVE_REPEATS),
                   *(['--skip-ros'] if args.skip_ros else [])])
    if 'ingest' in args.only and not args.skip_ros:
        ingest_rate.main([])  # the topic ingest rate of a fresh node; results in docs/ingest.md
    if 'peers' in args.only:
        peers.main(['--sizes', *sizes])
    large = [s for s in sizes if int(s) >= 100_000]
    if 'whatif' in args.only and large:
        whatif.main(['--sizes', *large])
    if 'fleet' in args.only:
        fleet.main([])  # 100k shared memories from 10 robots; results in docs/fleet.md
    if 'fleet-recall' in args.only:
        fleet_locomo.main(['--write'])  # LoCoMo dev sessions split between two robots; docs/fleet.md
    if 'report' in args.only:
        report.main([])
    return 0


if __name__ == '__main__':
    sys.exit(main())
