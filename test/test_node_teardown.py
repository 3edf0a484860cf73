"""A destroyed node leaves no DDS participant behind in its process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rosutil import running_node

pytestmark = pytest.mark.ros


def _participants() -> int:
    """Fast DDS participants alive in this process: each runs one event thread, "dds.ev.<n>"."""
    count = 0
    for task in os.listdir('/proc/self/task'):
        try:
            with open(f'/proc/self/task/{task}/comm') as comm:
                count += comm.read().startswith('dds.ev')
        except OSError:
            continue  # a thread that ended while we looked
    return count


def test_a_destroyed_node_leaves_no_participant(tmp_path: Path, model_paths: object) -> None:
    # rclpy's LifecycleNode kept its state machine, and with it the node and its participant,
    # after destroy_node: one more participant per node made, destroyed at exit by Fast DDS,
    # which could deadlock there (a test session hung after its summary).
    before = _participants()
    for i in range(2):
        with running_node(tmp_path / f'mem-{i}'):
            assert _participants() > before
        assert _participants() == before, f'round {i}'
