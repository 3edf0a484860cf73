"""Where the robot was when an observation was made: recent poses, looked up by stamp.

Perception lags: a caption from a vision-language model or a detection arrives a
fraction of a second to seconds after its image was taken, stamped with the image's
time, while the robot kept moving. Attaching the latest pose received put such a
memory where the robot had got to since. The node keeps the poses of the last
``keep_s`` seconds and attaches the one nearest the observation's stamp, as tf2 looks a
transform up at a message's time; an observation stamped after the newest pose gets
the newest (the robot is where it last said), and one older than every pose kept gets
none (where the robot was then is not known). A pose stamped more than ``keep_s`` before
the newest (the clock jumped back: a bag replayed again, a simulator reset) starts the
history afresh. ``keep_s`` = 0 keeps only the latest pose,
attached to everything (what the node did before).

Pure Python, no rclpy: the node feeds it from its pose subscription.
"""

from __future__ import annotations

import bisect
import threading
from collections import deque

from brainmem_ros.memory.types import Pose

#: Poses kept at most whatever ``keep_s`` says (a 100 Hz odometry topic for 30 s is 3,000).
MAX_POSES = 10000


class PoseHistory:
    """The robot's poses of the last ``keep_s`` seconds by stamp; thread-safe."""

    def __init__(self, keep_s: float = 30.0, *, max_poses: int = MAX_POSES) -> None:
        self.keep_s = max(0.0, keep_s)
        self._max = max(1, max_poses)
        self._lock = threading.Lock()
        self._stamps: deque[float] = deque()
        self._poses: deque[Pose] = deque()

    def __len__(self) -> int:
        return len(self._stamps)

    def add(self, stamp: float, pose: Pose) -> None:
        """Keep ``pose``, taken at ``stamp`` (seconds on the node's clock)."""
        with self._lock:
            if self.keep_s <= 0.0 or (self._stamps and stamp < self._stamps[-1] - self.keep_s):
                # Time jumped back further than the window (a bag replayed again with --loop,
                # a simulator reset): what was kept belongs to another timeline, as tf2's
                # buffer is cleared on a jump back.
                self._stamps.clear()
                self._poses.clear()
            if not self._stamps or stamp >= self._stamps[-1]:
                self._stamps.append(stamp)
                self._poses.append(pose)
            else:
                # Out of order (two pose publishers, a bag's interleaving): keep the order by stamp.
                at = bisect.bisect_right(self._stamps, stamp)
                self._stamps.insert(at, stamp)
                self._poses.insert(at, pose)
            newest = self._stamps[-1]
            while len(self._stamps) > 1 and (len(self._stamps) > self._max
                                             or self._stamps[0] < newest - self.keep_s):
                self._stamps.popleft()
                self._poses.popleft()

    @property
    def latest(self) -> Pose | None:
        """The pose with the newest stamp (None before any)."""
        with self._lock:
            return self._poses[-1] if self._poses else None

    def at(self, stamp: float) -> Pose | None:
        """The pose nearest ``stamp``: the newest for a stamp after every pose, None for one
        before every pose kept (with ``keep_s`` = 0: the latest pose, whatever the stamp)."""
        with self._lock:
            if not self._stamps:
                return None
            if self.keep_s <= 0.0 or stamp >= self._stamps[-1]:
                return self._poses[-1]
            after = bisect.bisect_left(self._stamps, stamp)
            if after == 0:
                return self._poses[0] if self._stamps[0] == stamp else None
            before = after - 1
            nearer = after if self._stamps[after] - stamp < stamp - self._stamps[before] else before
            return self._poses[nearer]
