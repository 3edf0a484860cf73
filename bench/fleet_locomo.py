"""Fleet recall on real data: each LoCoMo dev conversation split between two robots.

``python -m bench.fleet_locomo [--write]``

Each conversation's sessions are lived by two robots, as a fleet's robots live
different episodes: robot ``a`` stores the turns of the odd sessions, robot ``b`` those
of the even ones, and both share them through a real PostgreSQL with pgvector. Every
question of categories 1-4 is asked of robot ``a`` with ``scope='fleet'``; a hit when an
evidence turn is in the merged top 10, whoever stored it. Side by side, in one run: one
robot holding every turn (what the fleet should come near); each robot ranking its own
memories with the full local pipeline and the two lists merged by score (a reference:
what the fleet would give if the server ranked as a robot does, spreading activation
included); and robot ``a`` alone (what it knows without the fleet). With ``--write``,
the table goes into docs/fleet.md between its ``bench.fleet_locomo`` markers.

Nothing here is tuned to the data: the fusion is ``brainmem_ros/fleet/fusion.py`` as
it ships; this measures it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import locomo
from bench.common import load_embedder
from brainmem_ros.encoders.base import Embedder
from brainmem_ros.fleet.local_server import LocalPostgres, setup_fleet
from brainmem_ros.fleet.sync import FleetSync
from brainmem_ros.memory import BrainMem

DOC = Path(__file__).resolve().parent.parent / 'docs' / 'fleet.md'
BEGIN, END = '<!-- bench.fleet_locomo begin -->', '<!-- bench.fleet_locomo end -->'


def _robot(pg: LocalPostgres, configs: dict[str, Any], name: str, root: Path,
           embedder: Embedder) -> tuple[BrainMem, FleetSync]:
    sync = FleetSync(configs[name])
    mem = BrainMem.open(root / name, embedder=embedder, on_event=sync.observe)
    sync.attach(mem, start=False)
    return mem, sync


def fleet_hits(conv: locomo.Conversation, pg: LocalPostgres, index: int, root: Path,
               embedder: Embedder) -> tuple[list[int], list[int], list[int], float]:
    """Per question: hit through the fleet, by merged local rankings, by robot a alone; a's share of turns."""
    configs = setup_fleet(pg, f'locomo_{index}', ['a', 'b'], fleet_id=f'conv{index}',
                          secrets_dir=root / 'secrets', dim=embedder.dim, cache_max=0)
    robots = {name: _robot(pg, configs, name, root, embedder) for name in ('a', 'b')}
    dia_of: dict[str, dict[int, set[str]]] = {'a': {}, 'b': {}}
    try:
        for turn in conv.turns:
            name = 'a' if int(turn.session.rsplit('_', 1)[-1]) % 2 else 'b'
            mem, sync = robots[name]
            unit = mem.store(turn.text, stamp=turn.stamp, episode_id=turn.session, source=turn.speaker)
            dia_of[name].setdefault(unit.id, set()).add(turn.dia_id)
        for name, (_, sync) in robots.items():
            sync.share(list(dia_of[name]))
            while sync.stats().pending:
                sync.sync_once()
        _, sync_a = robots['a']
        fleet: list[int] = []
        alone: list[int] = []
        federated: list[int] = []
        for q in conv.questions:
            recall = sync_a.retrieve(q.text, scope='fleet', top_k=locomo.TOP_K)
            got: set[str] = set()
            for r in recall.results:
                got |= dia_of['b' if r.robot_id == 'b' else 'a'].get(r.memory.unit.id, set())
            fleet.append(int(bool(got & q.evidence)))
            local = sync_a.retrieve(q.text, scope='local', top_k=locomo.TOP_K)
            mine: set[str] = set()
            for r in local.results:
                mine |= dia_of['a'].get(r.memory.unit.id, set())
            alone.append(int(bool(mine & q.evidence)))
            both = sorted([(m.score, name, m.unit.id) for name, (mem, _) in robots.items()
                           for m in mem.retrieve(q.text, top_k=locomo.TOP_K)], reverse=True)
            merged: set[str] = set()
            for _, name, uid in both[:locomo.TOP_K]:
                merged |= dia_of[name].get(uid, set())
            federated.append(int(bool(merged & q.evidence)))
        held = sum(len(v) for v in dia_of['a'].values()) / max(1, len(conv.turns))
        return fleet, federated, alone, held
    finally:
        for mem, sync in robots.values():
            sync.close()
            mem.close()


def run() -> dict[str, Any]:
    """The three rows of the table, per category, and how long the run took."""
    t0 = time.perf_counter()
    embedder = load_embedder()
    convs = locomo.load()
    fleet: dict[str, list[int]] = {}
    federated: dict[str, list[int]] = {}
    alone: dict[str, list[int]] = {}
    held: list[float] = []
    with tempfile.TemporaryDirectory(prefix='brainmem-fleet-locomo-') as tmp, LocalPostgres() as pg:
        root = Path(tmp)
        built = [locomo.build(c, root / f'single{i}', embedder) for i, c in enumerate(convs)]
        single = locomo.score(built, embedder, locomo.brainmem_ranker())
        for i, conv in enumerate(convs):
            f, m, a, h = fleet_hits(conv, pg, i, root / f'conv{i}', embedder)
            fleet[conv.sample_id], federated[conv.sample_id], alone[conv.sample_id] = f, m, a
            held.append(h)
            print(f'{conv.sample_id}: fleet {np.mean(f):.3f}, robot a alone {np.mean(a):.3f}, '
                  f'single store {np.mean(single[conv.sample_id]):.3f}', flush=True)
    return {'single': locomo.summarise(single, convs), 'fleet': locomo.summarise(fleet, convs),
            'alone': locomo.summarise(alone, convs), 'federated': locomo.summarise(federated, convs),
            'held_by_a': float(np.mean(held)),
            'questions': sum(len(c.questions) for c in convs), 'seconds': time.perf_counter() - t0}


def table(result: dict[str, Any]) -> str:
    """The Markdown block for docs/fleet.md."""
    cols = ['all', *locomo.CATEGORIES.values()]
    rows = [('one robot holding every turn', result['single']),
            ('robot a, scope fleet (its sessions + robot b\'s, shared)', result['fleet']),
            ('reference: each robot ranks its own, merged by score', result['federated']),
            ('robot a alone (scope local)', result['alone'])]
    lines = [f'Measured with `python -m bench.fleet_locomo --write` on {time.strftime("%Y-%m-%d")} '
             f'({result["seconds"] / 60:.1f} min; n={result["questions"]} questions; robot a holds '
             f'{100 * result["held_by_a"]:.0f}% of the turns):', '',
             '| recall@10 | ' + ' | '.join(cols) + ' |', '|---|' + '---|' * len(cols)]
    lines += [f'| {name} | ' + ' | '.join(f'{r[c]:.3f}' for c in cols) + ' |' for name, r in rows]
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run, print the table, and with ``--write`` put it in docs/fleet.md."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--write', action='store_true', help='rewrite the table in docs/fleet.md')
    args = parser.parse_args(argv)
    block = table(run())
    print(block)
    if args.write:
        text = DOC.read_text()
        if BEGIN in text and END in text:
            text = text[:text.index(BEGIN) + len(BEGIN)] + '\n' + block + '\n' + text[text.index(END):]
        else:
            text += f'\n## Fleet recall on real data\n\n{BEGIN}\n{block}\n{END}\n'
        DOC.write_text(text)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
