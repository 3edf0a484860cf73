"""Smoke test of the launch file with launch_testing: the node comes up active, then stops.

Runs where ``launch``, ``launch_ros`` and ``launch_testing`` are installed and the package
is installed (a colcon workspace: ``colcon test``); skipped elsewhere, such as a venv with
ROS from PyPI wheels, which has none of them (``test_launch_static.py`` checks the file
there).
"""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip('launch_testing')
pytest.importorskip('launch_ros')

import launch_testing
import launch_testing.actions
import launch_testing.asserts
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource

from launch import LaunchDescription  # type: ignore[attr-defined]  # (mypy sees launch/ here)

LAUNCH = Path(__file__).resolve().parent.parent / 'launch' / 'brainmem.launch.py'


@pytest.mark.launch_test
def generate_test_description() -> LaunchDescription:
    """The package's launch file in a namespace of its own, on an empty data directory."""
    data_dir = tempfile.mkdtemp(prefix='brainmem-launch-')
    return LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(str(LAUNCH)), launch_arguments={
            'namespace': 'launch_smoke', 'data_dir': data_dir, 'log_level': 'info'}.items()),
        launch_testing.actions.ReadyToTest(),
    ])


class TestNodeComesUp(unittest.TestCase):
    """While the launch runs."""

    def test_node_activates(self, proc_output: Any) -> None:
        """With autostart (the default) the node configures and activates itself."""
        proc_output.assertWaitFor('active: serving store', timeout=180, stream='stderr')


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    """After the launch has stopped the node."""

    def test_exit_code(self, proc_info: Any) -> None:
        """A clean stop on SIGINT."""
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, 130])
