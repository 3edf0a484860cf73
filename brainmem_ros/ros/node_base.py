"""The state a memory node's callbacks share, and the helpers they all use.

:class:`~brainmem_ros.ros.node.BrainMemNode` is made of this base, the topic input
callbacks (:mod:`~brainmem_ros.ros.inputs`), the service callbacks
(:mod:`~brainmem_ros.ros.services`) and the outputs (:mod:`~brainmem_ros.ros.outputs`),
as rclpy's ``LifecycleNode`` is made of its mixin and ``Node``.
"""

from __future__ import annotations

import threading
from typing import Any

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleNode

from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.brainmem import BrainMem, check_text
from brainmem_ros.ros import convert, params
from brainmem_ros.ros.ingest import IngestWorker
from brainmem_ros.ros.pose_history import PoseHistory
from brainmem_ros.ros.timings import ServiceTimings

EPISODE_MAX_BYTES = 256  # what Store accepts as an episode id


class MemoryNodeBase(LifecycleNode):
    """The lifecycle node ``brainmem`` with the state its callbacks share."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('brainmem', **kwargs)
        self.mem: BrainMem | None = None
        self.cfg: params.NodeConfig | None = None
        self.configure_error = ''
        self.episode_id = ''
        self.goal = ''
        self._active = False
        self._ignored_inactive = 0
        self._lost_dds = 0
        self._stamps = convert.StampPolicy()
        self._poses = PoseHistory()
        self._markers_dirty = threading.Event()
        self._handles: list[Any] = []
        self._events_pub: Any = None
        self._markers_pub: Any = None
        # Reentrant groups: BrainMem serialises its own writes, and rclpy's
        # MultiThreadedExecutor busy-spins (holding the GIL) on ready entities of a
        # busy mutually exclusive group, which starved the workers under load (measured:
        # 58% of the node's samples in Future.done). Topic callbacks only enqueue.
        # See also brainmem_ros.ros.node.EXECUTOR_THREADS. The one exception is the group
        # of the observation and caption subscriptions, whose callbacks take the messages
        # waiting (brainmem_ros.ros.inputs.drain): one at a time keeps their order.
        self._ingest_group = ReentrantCallbackGroup()
        self._input_group = MutuallyExclusiveCallbackGroup()
        self._store_group = ReentrantCallbackGroup()
        self._query_group = ReentrantCallbackGroup()
        self._ingest: IngestWorker | None = None
        self._fleet: Any = None  # brainmem_ros.fleet.sync.FleetSync when fleet.enabled
        self._admin_group = ReentrantCallbackGroup()
        self._timings = ServiceTimings()  # what each service callback took: Stats's service_ms
        self._queries: Any = None  # brainmem_ros.ros.query_server.QueryServer once configured

    def now(self) -> float:
        """The node's clock in POSIX seconds (sim time with use_sim_time): the memory's clock."""
        ns = self.get_clock().now().nanoseconds
        if ns <= 0:
            msg = 'the node clock has no time yet: use_sim_time is true and nothing was published on /clock'
            raise BrainMemError(msg)
        return ns / 1e9

    def _memory(self) -> BrainMem:
        if self.mem is None:
            msg = 'memory is not configured (node inactive)'
            raise BrainMemError(msg)
        return self.mem

    def _ingest_warning(self, text: str) -> None:
        self.get_logger().warning(text, throttle_duration_sec=2.0)

    def _episode(self, text: str) -> str:
        return check_text(text, 'episode_id', max_bytes=EPISODE_MAX_BYTES, required=False)

    def _goal(self, text: str) -> str:
        return check_text(text, 'goal', max_bytes=self._memory().config.store.max_text_bytes,
                          required=False)
