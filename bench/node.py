"""The real node as its own process, and a client node spinning in the benchmark's.

Two processes, as on a robot (the planner is not inside the memory's process): each
has its own interpreter and GIL. rclpy is imported when a node is started, so the
benchmarks that never start one do not need it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import REPO


@contextmanager
def node_and_client(data_dir: Path, params: dict[str, Any], *, params_file: Path, log: Path,
                    client_name: str) -> Iterator[tuple[Any, int]]:
    """``brainmem_node`` on ``data_dir`` (markers off, ``params`` on top) and a client: (client, pid).

    The parameters are written to ``params_file``, the node's output to ``log``.
    """
    import rclpy
    import yaml
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    from brainmem_ros.ros.spin import SpinThread

    sys.path.insert(0, str(REPO / 'test'))
    from rosutil import node_process

    params_file.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        'data_dir': str(data_dir), 'markers_period_s': 0.0, **params}}}))
    context = Context()
    rclpy.init(context=context)
    client = rclpy.create_node(client_name, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(client)
    spinning = SpinThread(executor, name='bench-client')
    try:
        with node_process(['--ros-args', '--params-file', str(params_file)], log=log) as proc:
            yield client, proc.pid
    finally:
        spinning.stop()
        client.destroy_node()
        rclpy.try_shutdown(context=context)


def call(cli: Any, request: Any, *, timeout: float = 60.0, what: str = 'service call') -> Any:
    """The response of one call of client ``cli`` (the client node spins on its own thread)."""
    from brainmem_ros.ros.client import answer

    response = answer(cli, request, timeout)
    if response is None:
        msg = f'{what} did not answer within {timeout:.0f} s'
        raise TimeoutError(msg)
    return response
