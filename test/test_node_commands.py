"""After `make setup`: `brainmem` and `brainmem_node` run without an activated venv."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

VENV = REPO / '.venv'


def bare_env(tmp_path: Path) -> dict[str, str]:
    """What a fresh login shell has: no venv on PATH, no ROS variables."""
    return {'HOME': str(tmp_path), 'PATH': '/usr/bin:/bin',
            'ROS_DOMAIN_ID': os.environ.get('ROS_DOMAIN_ID', '0'),
            'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}


@pytest.mark.parametrize('script', [VENV / 'bin' / 'brainmem', VENV / 'lib' / 'brainmem_ros' / 'brainmem'])
def test_brainmem_runs_outside_the_venv(script: Path, tmp_path: Path) -> None:
    assert script.is_file(), f'{script} missing: run make setup'
    out = subprocess.run([str(script), '--timeout', '0.5', 'stats'], env=bare_env(tmp_path), cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False)
    # No node runs on this domain: a clean "not available", not an ImportError.
    assert 'stats is not available' in out.stderr, out.stdout + out.stderr


def test_env_sh_gives_a_ros_shell(tmp_path: Path) -> None:
    command = f'. {REPO / "env.sh"} && command -v brainmem && brainmem_node --help 2>&1 | head -1; ' \
              'python -c "import rclpy, brainmem_ros.msg; print(rclpy.ok())"'
    out = subprocess.run(['bash', '-c', command], env=bare_env(tmp_path), cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[0] == str(VENV / 'bin' / 'brainmem')
    assert out.stdout.strip().endswith('False')
    assert 'make shell' in (REPO / 'README.md').read_text()
