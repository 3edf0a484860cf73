"""What the memory node publishes: memory events, and markers for RViz."""

from __future__ import annotations

from rclpy.exceptions import InvalidHandle

from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.types import MemoryEvent
from brainmem_ros.msg import MemoryEvent as MemoryEventMsg
from brainmem_ros.ros.markers import fact_markers, memory_markers
from brainmem_ros.ros.node_base import MemoryNodeBase


class OutputCallbacks(MemoryNodeBase):
    """The node's event and marker publishing (the publishers are the lifecycle node's)."""

    def _event_callback(self, event: MemoryEvent) -> None:
        if self._fleet is not None:
            self._fleet.observe(event)
        self._markers_dirty.set()
        pub = self._events_pub
        if pub is None or not self._active:
            return
        msg = MemoryEventMsg(kind=event.kind, ids=list(event.ids), detail=event.detail[:1000])
        msg.stamp = self.get_clock().now().to_msg()
        try:
            pub.publish(msg)
        except InvalidHandle:
            return  # the publisher was destroyed by a concurrent deactivation

    def markers_callback(self) -> None:
        """Publish markers when something changed, or at the configured period."""
        cfg, pub, mem = self.cfg, self._markers_pub, self.mem
        if cfg is None or pub is None or mem is None or cfg.max_markers == 0 or not self._active:
            return
        if pub.get_subscription_count() == 0:
            # Nobody draws them: building 2 markers per memory costs real CPU (py-spy:
            # a third of a core during a topic burst), which Store and Retrieve need more.
            self._markers_dirty.set()  # so the first subscriber gets a fresh array
            return
        if cfg.markers_period_s <= 0 and not self._markers_dirty.is_set():
            return
        self._markers_dirty.clear()
        try:
            ids = mem.store_db.recent_posed_ids(limit=cfg.max_markers)
            units = list(mem.store_db.get_units(ids).values())
            now = self.get_clock().now().nanoseconds / 1e9
            array = memory_markers(units, stamp=now)
            if cfg.fact_markers:
                places = mem.facts.last_positions(limit=cfg.max_markers)
                array.markers.extend(fact_markers(places, stamp=now).markers)
            pub.publish(array)
        except (BrainMemError, InvalidHandle):
            return  # deactivated or closed while this timer tick was running
