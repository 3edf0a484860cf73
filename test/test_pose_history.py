"""Poses looked up by an observation's stamp (brainmem_ros.ros.pose_history)."""

from __future__ import annotations

from brainmem_ros.memory.types import Pose
from brainmem_ros.ros.pose_history import PoseHistory


def _x(pose: Pose | None) -> float | None:
    return None if pose is None else pose.x


def test_nearest_pose_to_the_stamp() -> None:
    h = PoseHistory(30.0)
    for t, x in ((100.0, 1.0), (101.0, 2.0), (102.0, 3.0)):
        h.add(t, Pose(x, 0.0))
    assert _x(h.at(100.4)) == 1.0  # a caption of an image taken at 100.4 s, wherever it arrives
    assert _x(h.at(100.6)) == 2.0
    assert _x(h.at(101.0)) == 2.0
    assert _x(h.at(250.0)) == 3.0  # after every pose: where the robot last said it was
    assert h.at(99.0) is None      # before every pose kept: not known
    assert _x(h.at(100.0)) == 1.0
    assert _x(h.latest) == 3.0


def test_out_of_order_poses_are_kept_in_stamp_order() -> None:
    h = PoseHistory(30.0)
    h.add(10.0, Pose(1.0, 0.0))
    h.add(12.0, Pose(3.0, 0.0))
    h.add(11.0, Pose(2.0, 0.0))  # a second publisher, or a bag's interleaving
    assert [_x(h.at(t)) for t in (10.1, 11.1, 11.9)] == [1.0, 2.0, 3.0]
    assert _x(h.latest) == 3.0


def test_old_poses_are_let_go() -> None:
    h = PoseHistory(5.0, max_poses=100)
    for i in range(20):
        h.add(float(i), Pose(float(i), 0.0))
    assert len(h) == 6  # 14 .. 19: within 5 s of the newest
    assert h.at(10.0) is None and _x(h.at(14.2)) == 14.0
    small = PoseHistory(1000.0, max_poses=3)
    for i in range(10):
        small.add(float(i), Pose(float(i), 0.0))
    assert len(small) == 3 and small.at(5.0) is None


def test_keep_zero_attaches_the_latest_pose_whatever_the_stamp() -> None:
    h = PoseHistory(0.0)
    assert h.at(5.0) is None
    h.add(100.0, Pose(1.0, 0.0))
    h.add(200.0, Pose(2.0, 0.0))
    assert len(h) == 1 and _x(h.at(0.0)) == 2.0 and _x(h.at(150.0)) == 2.0


def test_a_clock_jump_back_starts_afresh() -> None:
    # A bag replayed again with --loop: /clock restarts, and the poses of the new pass must
    # not be let go as older than the last pass's newest.
    h = PoseHistory(30.0)
    for t in (1000.0, 1001.0, 1002.0):
        h.add(t, Pose(t - 1000.0, 0.0))
    h.add(10.0, Pose(50.0, 0.0))
    h.add(11.0, Pose(51.0, 0.0))
    assert len(h) == 2 and _x(h.latest) == 51.0 and _x(h.at(10.2)) == 50.0
    h.add(5.0, Pose(49.0, 0.0))  # out of order within the window: kept in order, not a jump
    assert len(h) == 3 and _x(h.at(5.1)) == 49.0
