"""The planner's queries (Retrieve, StateOf) on a node and executor of their own.

The memory node serves its other services, topics and timers on a multi-threaded
executor: each request wakes its loop (a wait set rebuilt in Python over every
entity: the lifecycle, parameter and memory services, the input topics, the timers)
and hands the callback to a pool thread, and the loop wakes again when the callback
starts and when it ends, holding the interpreter each time while the Retrieve runs.
Retrieve is the latency-bound request, so it and StateOf are served by a second
node in the same process and namespace, ``<node name>_recall``, spun by a
single-threaded executor on a thread of its own: its wait set holds these two
services, and each callback runs on the thread that took the request.

Measured on the 10k bench store (seven alternating pairs of runs, a one-off script
over ``bench.perf``'s queries, 2026-12-01): Retrieve p99 through the service
25.2-26.8 ms against 26.9-33.1 with the services on the memory node, better in every
pair; p50 17.2-20.8 against 18.0-24.1.

Retrieves are answered one at a time (they were mostly so already: the store has
one lock). Remapping works as for the memory node (``-r retrieve:=...`` and the
namespace apply to every node of the process).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from brainmem_ros.ros.spin import SpinThread

#: What the query node's name adds to the memory node's.
SUFFIX = '_recall'


class QueryServer:
    """Services of ``parent`` served by a node and executor of their own (see the module)."""

    def __init__(self, parent: Node, services: Sequence[tuple[Any, str, Callable[[Any, Any], Any]]]) -> None:
        self.node = rclpy.create_node(f'{parent.get_name()}{SUFFIX}', namespace=parent.get_namespace(),
                                      context=parent.context, start_parameter_services=False,
                                      enable_rosout=False)
        for srv_type, name, callback in services:
            self.node.create_service(srv_type, name, callback)
        executor = SingleThreadedExecutor(context=parent.context)
        executor.add_node(self.node)
        self._spinning = SpinThread(executor, name='brainmem-recall')

    def close(self) -> None:
        """Stop serving (after the query under way) and destroy the node (the spinning
        thread ends first: :class:`~brainmem_ros.ros.spin.SpinThread`)."""
        self._spinning.stop()
        self.node.destroy_node()
