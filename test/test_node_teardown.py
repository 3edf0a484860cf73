"""A destroyed node leaves no DDS participant behind in its process."""

from __future__ import annotations

from pathlib import Path

import pytest
from rosutil import dds_participants, running_node

pytestmark = pytest.mark.ros


def test_a_destroyed_node_leaves_no_participant(tmp_path: Path, model_paths: object) -> None:
    # rclpy's LifecycleNode kept its state machine, and with it the node and its participant,
    # after destroy_node: one more participant per node made, destroyed at exit by Fast DDS,
    # which could deadlock there (a test session hung after its summary).
    before = dds_participants()
    for i in range(2):
        with running_node(tmp_path / f'mem-{i}'):
            assert dds_participants() > before
        assert dds_participants() == before, f'round {i}'
