"""Fleet tier: recall latency over N shared memories from 10 robots, and sync throughput.

``python -m bench.fleet [--units 100000] [--queries 200] [--sync-units 2000]`` starts a
local PostgreSQL 16 + pgvector, loads N shared units (10 simulated robots, random
unit vectors, generated texts) through the robots' own roles (row-level security on),
then times fleet recall (HNSW + full text, as FleetClient.recall runs it) and the
end-to-end outbox drain of a real robot memory. Results go to docs/fleet.md.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psycopg

from bench.dbfile import file_rows
from brainmem_ros.fleet.local_server import LocalPostgres, setup_fleet
from brainmem_ros.fleet.pg_store import FleetRow, RecallFilter
from brainmem_ros.fleet.sync import FleetSync, client_from_config

DOC = Path(__file__).resolve().parent.parent / 'docs' / 'fleet.md'
BEGIN, END = '<!-- bench.fleet begin -->', '<!-- bench.fleet end -->'
ROBOTS = [f'sim{i}' for i in range(10)]
OBJECTS = ['lift', 'door', 'printer', 'charger', 'stairs', 'fridge', 'window', 'elevator', 'badge reader',
           'coffee machine', 'loading bay', 'trolley']
STATES = ['is out of order', 'sticks', 'is jammed', 'is blocked', 'works again', 'is wet', 'is locked']
DIM = 384


def _rows(rng: np.random.Generator, n: int, start: int) -> list[FleetRow]:
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = []
    for i in range(n):
        obj, state = OBJECTS[(start + i) % len(OBJECTS)], STATES[(start + i) % len(STATES)]
        text = f'The {obj} in building {chr(65 + i % 8)} room {start + i} {state}'
        rows.append(FleetRow(unit_id=start + i + 1, version=1, stamp=1.7e9 + i, type='observation',
                             episode_id='', source='bench', text=text, entity_names=obj, entities='[]',
                             state_changes='[]', outcome='unknown', importance=5.0, strength=1.0,
                             valence=0.0, pose=None, marginalized=False, vector=vecs[i]))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the fleet benchmark and rewrite its section of docs/fleet.md."""
    parser = argparse.ArgumentParser(prog='python -m bench.fleet')
    parser.add_argument('--units', type=int, default=100_000)
    parser.add_argument('--queries', type=int, default=200)
    parser.add_argument('--sync-units', type=int, default=2000)
    parser.add_argument('--no-write', action='store_true', help='print only, leave docs/fleet.md')
    args = parser.parse_args(argv)
    rng = np.random.default_rng(7)
    work = Path(tempfile.mkdtemp(prefix='brainmem-bench-fleet-'))
    lines: list[str] = []
    with LocalPostgres() as pg:
        configs = setup_fleet(pg, 'bench', [*ROBOTS, 'reader'], fleet_id='bench',
                              secrets_dir=work / 'secrets', dim=DIM, batch_size=500)
        # Bulk load: the HNSW index is built once after the load (as an operator
        # would for an import), not row by row.
        with psycopg.connect(pg.admin_conninfo('bench'), autocommit=True) as admin:
            admin.execute('DROP INDEX fleet_units_embedding')
        per = args.units // len(ROBOTS)
        t0 = time.perf_counter()
        for r, robot in enumerate(ROBOTS):
            client = client_from_config(configs[robot])
            try:
                for start in range(0, per, 1000):
                    client.upsert_units(_rows(rng, min(1000, per - start), r * per + start), fleet_id='bench')
            finally:
                client.close()
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        with psycopg.connect(pg.admin_conninfo('bench'), autocommit=True) as admin:
            admin.execute("SET maintenance_work_mem = '512MB'")
            admin.execute('CREATE INDEX fleet_units_embedding ON fleet_units '
                          'USING hnsw (embedding vector_cosine_ops)')
            admin.execute('ANALYZE fleet_units')
        index_s = time.perf_counter() - t0
        n = per * len(ROBOTS)
        lines.append(f'- load: {n} shared units from {len(ROBOTS)} robots through their roles (RLS on) '
                     f'in {load_s:.1f} s ({n / load_s:.0f} upserts/s); HNSW build {index_s:.1f} s')
        reader = client_from_config(configs['reader'])
        try:
            flt = RecallFilter(types=('action', 'observation', 'outcome', 'plan'))
            times = []
            for q in range(args.queries):
                vec = rng.standard_normal(DIM).astype(np.float32)
                vec /= np.linalg.norm(vec)
                text = f'is the {OBJECTS[q % len(OBJECTS)]} {STATES[q % len(STATES)].split()[-1]}?'
                t = time.perf_counter()
                hits = reader.recall(vec, text, limit=50, recall_filter=flt)
                times.append(time.perf_counter() - t)
                assert hits
            ms = np.asarray(times[5:]) * 1000  # first queries warm the pool and the cache
            lines.append(f'- fleet recall (HNSW top-50 + full-text top-50, one round trip each) over {n} '
                         f'units: p50 {np.percentile(ms, 50):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms, '
                         f'p99 {np.percentile(ms, 99):.1f} ms ({len(ms)} queries)')
        finally:
            reader.close()
        lines.append(_sync(configs['reader'], work, args.sync_units))
    for line in lines:
        print(line)
    if not args.no_write:
        _write(lines, args)
    return 0


def _sync(cfg: object, work: Path, count: int) -> str:
    from brainmem_ros.memory import BrainMem
    from brainmem_ros.memory.types import ObservationInput

    sync = FleetSync(cfg)  # type: ignore[arg-type]
    mem = BrainMem.open(work / 'robot', on_event=sync.observe)
    try:
        sync.attach(mem, start=False)
        items = [ObservationInput(text=f'Shelf {i} in aisle {i % 13} holds {i} boxes of part {i * 7}')
                 for i in range(count)]
        for start in range(0, count, 256):
            mem.store_many(items[start:start + 256])
        ids = [int(r[0]) for r in file_rows(mem.store_db.path,
                                            "SELECT id FROM units WHERE type = 'observation'")]
        t0 = time.perf_counter()
        sync.share(ids)
        queued_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = sync.sync_once()
        drain_s = time.perf_counter() - t0
    finally:
        sync.close()
        mem.close()
    return (f'- sync: {len(ids)} units queued in {queued_s * 1000:.0f} ms, outbox drained end to end '
            f'(SQLite read, upsert batches of 500, acknowledgement) in {drain_s:.2f} s = '
            f'{report.sent / drain_s:.0f} units/s')


def _write(lines: list[str], args: argparse.Namespace) -> None:
    cmd = (f'`python -m bench.fleet --units {args.units} --queries {args.queries} '
           f'--sync-units {args.sync_units}`')
    block = '\n'.join([BEGIN, f'Measured on this 2-core machine with {cmd}:', '', *lines, END])
    text = DOC.read_text() if DOC.exists() else ''
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + '.*?' + re.escape(END), lambda _: block, text, flags=re.S)
    else:
        text += '\n' + block + '\n'
    DOC.write_text(text)


if __name__ == '__main__':
    sys.exit(main())
