"""Start-up failures of the node process: one line with the cause, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from rosutil import node_env

from brainmem_ros.memory import BrainMem

pytestmark = pytest.mark.ros


def start(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, '-m', 'brainmem_ros.ros.node', '--ros-args', *args],
                          env=node_env(), capture_output=True, text=True, timeout=120, check=False)


def test_data_dir_that_is_a_file(tmp_path: Path, model_paths: object) -> None:
    path = tmp_path / 'not_a_dir'
    path.write_text('x')
    out = start('-p', f'data_dir:={path}')
    text = out.stdout + out.stderr
    assert out.returncode == 1 and 'Traceback' not in text
    assert 'is a file, not a directory' in text and str(path) in text


def test_damaged_database(tmp_path: Path, embedder: object) -> None:
    data = tmp_path / 'mem'
    with BrainMem.open(data, embedder=embedder) as mem:  # type: ignore[arg-type]
        for i in range(300):
            mem.store(f'The robot saw object {i} in room {i % 7}', stamp=1_780_000_000.0 + i)
    db = data / 'memory.db'
    raw = bytearray(db.read_bytes())
    page = 4096
    for start_at in range(page, len(raw), page):  # every page but the header page
        raw[start_at:start_at + 64] = b'\xde\xad' * 32
    db.write_bytes(bytes(raw))
    out = start('-p', f'data_dir:={data}')
    text = out.stdout + out.stderr
    assert out.returncode == 1 and 'Traceback' not in text, text
    fatal = [line for line in text.splitlines() if 'could not configure' in line and 'FATAL' in line]
    assert fatal and 'damaged' in fatal[0] and 'memory.db' in fatal[0], text


@pytest.mark.parametrize(('arg', 'name'), [('memory.retrieval.w_act:=high', 'memory.retrieval.w_act'),
                                           ('memory.retrieval.hops:=1.0', 'memory.retrieval.hops'),
                                           ('qos_depth:=0', 'qos_depth')])
def test_wrongly_typed_parameter(tmp_path: Path, arg: str, name: str) -> None:
    out = start('-p', arg, '-p', f'data_dir:={tmp_path / "m"}')
    text = out.stdout + out.stderr
    assert out.returncode == 2 and 'Traceback' not in text, text
    assert 'invalid parameter' in text and name in text
