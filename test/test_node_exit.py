"""The node's exit after a signal waits for rclpy's own handling of it (ros/shutdown.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import REPO
from rosutil import node_env

pytestmark = pytest.mark.ros

# Run in a process of its own: rclpy's signal handlers are process-wide.
_SCRIPT = textwrap.dedent('''
    import os, signal, time
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from brainmem_ros.ros.shutdown import signal_handled

    rclpy.init()
    context = rclpy.get_default_context()
    executor = SingleThreadedExecutor()  # its guard condition is one rclpy's thread triggers
    assert not signal_handled(context, timeout=0.2), 'no signal yet: the wait must time out'
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5.0)  # KeyboardInterrupt arrives here
        raise SystemExit('no KeyboardInterrupt')
    except KeyboardInterrupt:
        handled = signal_handled(context, timeout=10.0)
    print('handled', handled, 'ok', context.ok(), flush=True)
    executor.shutdown()  # now safe: rclpy's thread is done with the guard conditions
''')


def test_the_exit_waits_until_rclpy_has_shut_the_context_down() -> None:
    out = subprocess.run([sys.executable, '-c', _SCRIPT], env=node_env(), cwd=REPO, check=False,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'handled True ok False' in out.stdout, out.stdout + out.stderr
