"""The node process's own signal handling (ros/shutdown.py): stop, hurry, then ignore."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import REPO
from rosutil import node_env

pytestmark = pytest.mark.ros

# Run in a process of its own: signal handlers are process-wide.
_SCRIPT = textwrap.dedent('''
    import os, signal, threading, time
    from brainmem_ros.ros.shutdown import StopSignals

    signals = StopSignals()
    signals.install()
    print('idle', signals.wait(lambda: False, period=0.05), flush=True)  # not running: False
    hurried = threading.Event()
    signals.hurry_with(hurried.set)
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
    start = time.monotonic()
    stopped = signals.wait(lambda: True, period=30.0)  # the signal wakes it, not the period
    print('stopped', stopped, time.monotonic() - start < 10.0, hurried.is_set(), flush=True)
    os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt: a second signal hurries
    print('hurried', hurried.wait(10.0), signals.received == [signal.SIGTERM, signal.SIGINT], flush=True)
    signals.closed()  # a late signal must not turn the clean exit into -SIGINT
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)
    print('ignored', len(signals.received), flush=True)
''')


def test_the_first_signal_stops_and_a_later_one_hurries() -> None:
    out = subprocess.run([sys.executable, '-c', _SCRIPT], env=node_env(), cwd=REPO, check=False,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = ['idle False', 'stopped True True False', 'hurried True True', 'ignored 2']
    assert out.stdout.split('\n')[:4] == lines, out.stdout + out.stderr
