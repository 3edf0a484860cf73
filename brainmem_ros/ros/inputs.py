"""What the memory node reads from topics: observations, captions, poses, episode and goal.

Topic callbacks only check and enqueue (:class:`~brainmem_ros.ros.ingest.IngestWorker`
stores in batches); while the node is inactive input is counted and ignored, and an
observation the memory would refuse is counted and logged, never fatal.

An observation or caption callback also takes the messages already waiting on its
subscription (:func:`drain`) instead of leaving each to its own turn of the executor:
one turn of rclpy's executor (a wait set of every entity of the node, a task, a pool
thread) cost about 0.85 ms of CPU per message in a burst, a third of what storing the
observation costs after it. The input subscriptions share a mutually exclusive callback
group, so while one callback takes, the executor waits on none of them: messages are
queued in the order they arrived, by one thread at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped
from rclpy.exceptions import InvalidHandle
from rclpy.subscription import Subscription
from std_msgs.msg import String

from brainmem_ros.errors import BrainMemError
from brainmem_ros.memory.requests import check_text
from brainmem_ros.memory.types import ObservationInput
from brainmem_ros.msg import Observation
from brainmem_ros.ros import convert
from brainmem_ros.ros.node_base import MemoryNodeBase

#: Messages one callback takes at most after its own, so that other input callbacks of
#: the group (poses, the episode) get their turn within a burst.
DRAIN_MAX = 256


def drain(sub: Subscription, handle: Callable[[Any], None], *, limit: int = DRAIN_MAX) -> int:
    """Hand ``handle`` the messages waiting on ``sub`` (at most ``limit``); returns how many.

    For a callback of ``sub`` in a mutually exclusive group: the executor takes nothing
    from ``sub`` meanwhile. A subscription destroyed meanwhile (deactivate) ends it.
    """
    taken = 0
    while taken < limit:
        try:
            with sub.handle:
                got = sub.handle.take_message(sub.msg_type, sub.raw)
        except InvalidHandle:
            break
        if got is None:
            break
        taken += 1
        handle(got[0])
    return taken


class InputCallbacks(MemoryNodeBase):
    """The node's topic input callbacks."""

    def _accepting(self) -> bool:
        if self._active and self._ingest is not None:
            return True
        self._ignored_inactive += 1
        self.get_logger().warning(f'topic input ignored while the node is inactive '
                                  f'({self._ignored_inactive} so far)', throttle_duration_sec=5.0)
        return False

    def input_subscription(self, msg_type: Any, topic: str, callback: Callable[[Any], None],
                           qos: Any, *, lost: Any) -> Subscription:
        """A subscription in the input group whose callback also drains it (see :func:`drain`)."""
        sub: Subscription | None = None

        def take(msg: Any) -> None:
            callback(msg)
            if sub is not None:
                drain(sub, callback)

        sub = self.create_subscription(msg_type, topic, take, qos, callback_group=self._input_group,
                                       event_callbacks=lost)
        return sub

    def _refused(self, exc: BrainMemError) -> None:
        if self._ingest is not None:
            self._ingest.counters.refused += 1
        self._ingest_warning(f'observation not stored: {exc}')

    def observation_callback(self, msg: Observation, *, share: bool = False) -> None:
        """Queue an Observation message for storing (and, with ``share``, for the fleet)."""
        if not self._accepting():
            return
        try:
            text = self._checked_text(msg.text)
            kwargs = convert.observation_kwargs(msg, episode_id=self.episode_id,
                                                pose_at=self._poses.at, now=self.now(),
                                                stamps=self._stamps)
        except BrainMemError as exc:
            self._refused(exc)
            return
        if self._ingest is not None:
            self._ingest.put(ObservationInput(text=text, **kwargs), share=share)

    def _checked_text(self, text: str) -> str:
        # At the entry, as the services do: a text over the limit used to travel with its
        # batch to the parser, which refused the whole batch with it.
        return check_text(text, 'text', max_bytes=self._memory().config.store.max_text_bytes, required=True)

    def shared_observation_callback(self, msg: Observation) -> None:
        """Queue an Observation from the shared topic: stored, then shared with the fleet."""
        self.observation_callback(msg, share=True)

    def _share_stored(self, ids: list[int]) -> None:
        """Share units stored from the shared topic (the ingest's commit thread calls it)."""
        fleet = self._fleet
        shared = fleet.share(ids) if fleet is not None else 0
        if shared < len(ids):
            reason = 'the fleet tier is off' if fleet is None else 'the fleet outbox is full'
            self._ingest_warning(f'{len(ids) - shared} observation(s) from the shared topic stored, '
                                 f'not shared: {reason}')

    def _text_callback_for(self, topic: str) -> Callable[[String], None]:
        return lambda msg: self.text_callback(msg, topic)

    def text_callback(self, msg: String, topic: str) -> None:
        """Queue a plain-text caption from one of ``text_topics``."""
        if not self._accepting():
            return
        try:
            text = self._checked_text(msg.data)
            now = self.now()
        except BrainMemError as exc:
            self._refused(exc)
            return
        if self._ingest is not None:
            self._ingest.put(ObservationInput(text=text, stamp=now, source=topic,
                                              episode_id=self.episode_id, pose=self._poses.latest))

    def message_lost_callback(self, event: Any) -> None:
        """DDS dropped input messages (best effort, or a reader queue overrun): count, say so."""
        self._lost_dds += int(event.total_count_change)  # summed over every input subscription
        self._ingest_warning(f'{event.total_count_change} input message(s) lost by DDS '
                             f'({event.total_count} in all): raise qos_depth')

    def pose_callback(self, msg: PoseStamped | PoseWithCovarianceStamped) -> None:
        """Keep the robot's pose by its stamp (attached to observations that carry none)."""
        pose = msg.pose.pose if isinstance(msg, PoseWithCovarianceStamped) else msg.pose
        try:
            # An unstamped pose was taken now; a stamp the observations would refuse is refused.
            stamp = convert.stamp_seconds(msg.header.stamp, now=self.now(), policy=self._stamps)
            self._poses.add(stamp, convert.pose_from_msg(pose, msg.header.frame_id))
        except BrainMemError as exc:
            self.get_logger().warning(f'pose ignored: {exc}', throttle_duration_sec=5.0)

    def episode_callback(self, msg: String) -> None:
        """Set the current episode (refused, with a warning, if Store would refuse it)."""
        try:
            self.episode_id = self._episode(msg.data)
        except BrainMemError as exc:
            self.get_logger().warning(f'episode ignored: {exc}', throttle_duration_sec=5.0)

    def goal_callback(self, msg: String) -> None:
        """Set the current goal (refused, with a warning, if Retrieve would refuse it)."""
        try:
            self.goal = self._goal(msg.data)
        except BrainMemError as exc:
            self.get_logger().warning(f'goal ignored: {exc}', throttle_duration_sec=5.0)
