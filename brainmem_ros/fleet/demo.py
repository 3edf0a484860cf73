"""``make fleet-demo``: two robots (two nodes) share a hazard through one local PostgreSQL.

Robot 1 learns that the lift is out of order and shares it; robot 2 recalls it with
scope fleet and reinforces it; robot 1 sees the reinforcement in its own memory.
The nodes run as processes with their own namespaces and data directories, and the
demo talks to them only through the ``brainmem`` command (ROS services).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from brainmem_ros.fleet.local_server import LocalPostgres, setup_fleet

HAZARD = 'The lift in building B is out of order'
QUERY = 'can I take the lift in building B?'


def _bin(name: str) -> str:
    found = Path(sys.executable).parent / name
    return str(found) if found.exists() else name


def _cli(ns: str, *args: str) -> str:
    done = subprocess.run([_bin('brainmem'), '--ns', ns, '--timeout', '20', *args], capture_output=True,
                          text=True, check=False, timeout=120)
    if done.returncode != 0:
        msg = f'brainmem {" ".join(args)} failed: {done.stderr.strip()[-1000:]}'
        raise SystemExit(msg)
    return done.stdout


def _strength(ns: str, unit_id: int) -> float:
    for line in _cli(ns, 'retrieve', QUERY, '-k', '5').splitlines():
        cols = line.split()
        if cols and cols[0] == str(unit_id):
            return float(cols[6])
    msg = f'memory {unit_id} not recalled by {ns}'
    raise SystemExit(msg)


def main(argv: list[str] | None = None) -> int:
    """Run the demo; exit status 0 when robot 1 saw robot 2's reinforcement."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--keep', action='store_true', help='keep the data directories')
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix='brainmem-fleet-demo-'))
    procs: list[subprocess.Popen[bytes]] = []
    with LocalPostgres() as pg:
        configs = setup_fleet(pg, 'fleet_demo', ['robot1', 'robot2'], fleet_id='demo',
                              secrets_dir=work / 'secrets', dim=384, sync_period_s=0.5)
        print(f'PostgreSQL with pgvector on 127.0.0.1:{pg.port}, database fleet_demo, '
              'roles brainmem_robot1 and brainmem_robot2 (row-level security)')
        for robot, cfg in configs.items():
            params = {'data_dir': str(work / robot), 'text_topics': [''], 'pose_topic': '',
                      'fleet': {k: (list(v) or [''] if isinstance(v, tuple) else v)
                                for k, v in vars(cfg).items()}}
            params_file = work / f'{robot}.yaml'
            params_file.write_text(yaml.safe_dump({'/**': {'ros__parameters': params}}))
            log = open(work / f'{robot}.log', 'wb')  # noqa: SIM115 - closed with the process
            procs.append(subprocess.Popen([_bin('brainmem_node'), '--ros-args', '--params-file',
                                           str(params_file), '-r', f'__ns:=/{robot}'],
                                          stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy()))
        try:
            return _story(work)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
            if not args.keep:
                subprocess.run(['rm', '-rf', str(work)], check=False)
            else:
                print(f'data directories and logs kept in {work}')


def _story(work: Path) -> int:
    out = _cli('/robot1', 'store', HAZARD, '--share', '--source', 'camera')
    unit_id = int(re.search(r'#(\d+)', out).group(1))  # type: ignore[union-attr]
    print(f'robot1 stored and shared: #{unit_id} {HAZARD!r}')
    before = _strength('/robot1', unit_id)
    _cli('/robot2', 'store', 'I charged my battery at dock 3')
    deadline = time.monotonic() + 30
    while True:
        out = _cli('/robot2', 'retrieve', QUERY, '--scope', 'fleet', '-k', '3')
        if 'robot1' in out or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    print('robot2 retrieve --scope fleet:\n' + out.rstrip())
    if 'robot1' not in out:
        print(f'FAILED: robot2 never saw the hazard (logs in {work})')
        return 1
    print(_cli('/robot2', 'reinforce', str(unit_id), '--reward', '1', '--robot', 'robot1',
               '--note', 'took the stairs').rstrip())
    deadline = time.monotonic() + 30
    after = before
    while after <= before and time.monotonic() < deadline:
        time.sleep(0.5)
        after = _strength('/robot1', unit_id)
    print(f'robot1 sees the reinforcement: strength of #{unit_id} {before:.3f} -> {after:.3f}')
    if after <= before:
        print(f'FAILED: the reinforcement never reached robot1 (logs in {work})')
        return 1
    print('fleet demo OK')
    return 0


if __name__ == '__main__':
    sys.exit(main())
