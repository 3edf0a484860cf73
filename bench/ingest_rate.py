"""Fast-path ingest rate through the ``observations`` topic (no LLM), node as its own process.

``python -m bench.ingest_rate [--count 3000] [--repeats 3] [--out docs/ingest.md]``

Each repeat starts ``brainmem_node`` on a fresh store (default parameters, as shipped:
spaCy parser, MiniLM int8 encoder, batches of ``ingest_batch_size``), warms it with a
few observations, then publishes ``count`` distinct observations of the benchmark
corpus (household sentences with a detail, a stamp, an episode and a pose) back to back
from a reliable keep-all publisher, and waits until the node's Stats account for all of
them. The rate is observations accounted for per second of wall time, first publish to
last store; the node's CPU time per observation (user + system, every thread) is
reported beside it because, on a shared machine, it moves less than the wall time.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import REPO, load_average, load_embedder
from bench.corpus import Corpus, CorpusUnit
from bench.node import call, node_and_client

#: Where the hand-written part of the page starts; regenerating keeps it.
KEPT = '## Measurements kept across runs'
N_WARM = 64
FIRST_UNIT = 20_000  # corpus units far from the start: not the ones other benchmarks store first
_COUNTED = ('stored', 'refused', 'dropped', 'lost_dds')


@dataclass(frozen=True)
class Run:
    """One burst into a fresh node."""

    count: int
    seconds: float
    stored: int
    lost: int
    cpu_ms_per_obs: float
    cores_used: float
    machine_idle: float
    load_before: float
    load_after: float

    @property
    def per_s(self) -> float:
        """Observations accounted for per second."""
        return self.count / self.seconds


def _machine_times() -> tuple[float, float]:
    """(idle, total) jiffies of every CPU since boot (Linux ``/proc/stat``)."""
    fields = [float(x) for x in Path('/proc/stat').read_text().splitlines()[0].split()[1:]]
    return fields[3] + fields[4], sum(fields)  # idle + iowait


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all threads (Linux ``/proc``)."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def _counts(stats: Any) -> dict[str, int]:
    from brainmem_ros.srv import Stats

    response = call(stats, Stats.Request(), what='the stats service')
    counts: dict[str, int] = json.loads(response.details_json)['ingest']
    return counts


def _accounted(counts: dict[str, int]) -> int:
    return sum(counts.get(k, 0) for k in _COUNTED)


def _observation(u: CorpusUnit, *, live: bool) -> Any:
    from brainmem_ros.msg import Observation

    msg = Observation(text=u.text, episode_id=u.episode_id, source='bench', has_pose=True)
    msg.header.frame_id = 'map'
    stamp = time.time() if live else u.stamp
    msg.header.stamp.sec = int(stamp)
    msg.header.stamp.nanosec = int((stamp % 1.0) * 1e9)
    msg.pose.position.x, msg.pose.position.y = u.pose.x, u.pose.y
    msg.pose.orientation.w = 1.0
    return msg


def _wait_accounted(stats: Any, target: int, timeout: float) -> tuple[dict[str, int], float]:
    """Poll Stats until ``target`` observations are accounted for; (counts, time reached)."""
    end = time.monotonic() + timeout
    while True:
        counts = _counts(stats)
        if _accounted(counts) >= target:
            return counts, time.perf_counter()
        if time.monotonic() > end:
            msg = f'only {_accounted(counts)} of {target} observations accounted for after {timeout:.0f} s'
            raise TimeoutError(msg)
        time.sleep(0.05)


def burst(units: Sequence[CorpusUnit], warm: Sequence[CorpusUnit], *, live: bool,
          params: dict[str, Any] | None = None, timeout: float = 600.0) -> Run:
    """Publish ``warm``, wait, then publish ``units`` back to back into a fresh node."""
    from brainmem_ros.msg import Observation
    from brainmem_ros.srv import Stats
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    with tempfile.TemporaryDirectory(prefix='brainmem-ingest-') as tmp, \
            node_and_client(Path(tmp) / 'memory', params or {}, params_file=Path(tmp) / 'params.yaml',
                            log=Path(tmp) / 'node.log', client_name='bench_ingest_client') as (client, pid):
        stats = client.create_client(Stats, 'stats')
        if not stats.wait_for_service(timeout_sec=120.0):
            msg = f'the node did not serve within 120 s (log: {tmp}/node.log)'
            raise TimeoutError(msg)
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,  # type: ignore[no-untyped-call]
                         history=HistoryPolicy.KEEP_ALL)
        pub = client.create_publisher(Observation, 'observations', qos)
        end = time.monotonic() + 30
        while pub.get_subscription_count() == 0 and time.monotonic() < end:
            time.sleep(0.05)
        for u in warm:
            pub.publish(_observation(u, live=live))
        base, _ = _wait_accounted(stats, len(warm), timeout)
        messages = [_observation(u, live=live) for u in units]  # built before the clock starts
        load_before = load_average()
        idle0, total0 = _machine_times()
        cpu0, t0 = _cpu_seconds(pid), time.perf_counter()
        for msg in messages:
            pub.publish(msg)
        counts, t1 = _wait_accounted(stats, _accounted(base) + len(units), timeout)
        cpu = _cpu_seconds(pid) - cpu0
        idle1, total1 = _machine_times()
        pub.wait_for_all_acked()
        client.destroy_publisher(pub)
        client.destroy_client(stats)
    return Run(count=len(units), seconds=t1 - t0, stored=counts['stored'] - base['stored'],
               lost=_accounted(counts) - counts['stored'] - (_accounted(base) - base['stored']),
               cpu_ms_per_obs=cpu / len(units) * 1e3, cores_used=cpu / (t1 - t0),
               machine_idle=(idle1 - idle0) / max(total1 - total0, 1.0), load_before=load_before,
               load_after=load_average())


def _page(runs: Sequence[Run], *, command: str, kept: str) -> str:
    rates = [r.per_s for r in runs]
    cpu = [r.cpu_ms_per_obs for r in runs]
    rows = [f'| {i + 1} | {r.count} | {r.stored} | {r.lost} | {r.seconds:.1f} | {r.per_s:.0f} | '
            f'{r.cpu_ms_per_obs:.2f} | {r.cores_used:.2f} | {r.machine_idle * 100:.0f}% | '
            f'{r.load_before:.1f} / {r.load_after:.1f} |'
            for i, r in enumerate(runs)]
    return '\n'.join([
        '# Ingest rate through the topic',
        '',
        f'Generated by `{command}` on {datetime.date.today().isoformat()} ({os.cpu_count()} CPUs, '
        'shared with other jobs: the load average is in the table).',
        '',
        'Each run starts `brainmem_node` as its own process on a fresh store with the default '
        'parameters unless `--param` says otherwise (spaCy parser and MiniLM int8 encoder, no LLM; '
        '`ingest_batch_size` 64), stores '
        f'{N_WARM} observations to warm it, then publishes the run\'s observations back to back on '
        '`observations` from a reliable keep-all publisher in this process and waits until the '
        "node's Stats account for all of them. Texts: units of the benchmark corpus "
        '(`bench/corpus.py`: a household sentence and a detail, with episode and pose). Stamps: '
        '`live` = when each message was built, just before publishing, as from a live sensor; '
        "`corpus` = the corpus's own (2024; they go back 11 to 15 hours at each 1,000-unit block "
        'boundary, which turns later fact claims into late ones that cost the commit more). '
        'Rate = observations / seconds from the first publish to the last one stored. CPU = the '
        "node process's user + system time per observation, all threads; cores = that time over the "
        "run's wall time; idle = the share of the machine's CPU time nobody used during the run. "
        'With idle near 0% the node got what other jobs left it, and the rate is about cores / CPU; '
        'on an idle 2-core machine it can approach 2 / CPU.',
        '',
        '| run | published | stored | lost or refused | seconds | observations/s | node CPU ms/obs '
        '| node cores | machine idle | load before / after |',
        '|---|---|---|---|---|---|---|---|---|---|',
        *rows,
        '',
        f'Median {statistics.median(rates):.0f} observations/s (min {min(rates):.0f}, max '
        f'{max(rates):.0f}); node CPU {statistics.median(cpu):.2f} ms per observation (median). '
        'Target (DESIGN.md section 5): at least 200 observations/s.',
        '',
        *([kept.rstrip(), ''] if kept else []),
    ])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bursts and write the page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--count', type=int, default=3000, help='observations per run')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--stamps', choices=('live', 'corpus'), default='live',
                        help="live: stamped when built, just before publishing (a live sensor); "
                             "corpus: the corpus's own 2024 stamps (a replayed log)")
    parser.add_argument('--param', action='append', default=[], metavar='NAME=VALUE',
                        help='a node parameter other than its default (YAML value; repeatable)')
    parser.add_argument('--out', type=Path, default=REPO / 'docs' / 'ingest.md')
    args = parser.parse_args(argv)
    import yaml

    params = {name: yaml.safe_load(value) for name, _, value in (p.partition('=') for p in args.param)}
    # Our own DDS domain, local only: tests and other benchmarks may run beside this one.
    os.environ.setdefault('ROS_DOMAIN_ID', str(201 + os.getpid() % 30))
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    corpus = Corpus(load_embedder())
    units = [u for u, _ in corpus.units(FIRST_UNIT, FIRST_UNIT + N_WARM + args.count)]
    runs: list[Run] = []
    for i in range(args.repeats):
        run = burst(units[N_WARM:], units[:N_WARM], live=args.stamps == 'live', params=params)
        runs.append(run)
        print(f'run {i + 1}: {run.count} in {run.seconds:.1f} s = {run.per_s:.0f}/s, stored {run.stored}, '
              f'node CPU {run.cpu_ms_per_obs:.2f} ms/obs on {run.cores_used:.2f} cores, machine idle '
              f'{run.machine_idle * 100:.0f}%, load {run.load_before:.1f} -> {run.load_after:.1f}',
              flush=True)
    command = (f'python -m bench.ingest_rate --count {args.count} --repeats {args.repeats} '
               f'--stamps {args.stamps}' + ''.join(f' --param {p}' for p in args.param))
    old = args.out.read_text(encoding='utf-8') if args.out.exists() else ''
    kept = old[old.index(KEPT):] if KEPT in old else ''
    args.out.write_text(_page(runs, command=command, kept=kept), encoding='utf-8')
    print(f'wrote {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
