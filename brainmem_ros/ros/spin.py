"""Spinning an rclpy executor that survives entities destroyed while it waits.

rclpy (Jazzy) builds each wait set from the node's entities without excluding ones
whose destruction another thread has just requested; entering such an entity raises
``InvalidHandle`` out of ``Executor.spin`` and the executor thread ends, after which
nothing is served (ros2/rclpy#1284). The node destroys its publishers and
subscriptions on deactivate from a service callback, and clients (replay, the
command line) destroy theirs while their executor spins: the next pass of the loop no
longer sees the destroyed entity, so spinning on is the fix.
"""

from __future__ import annotations

import logging

from rclpy.exceptions import InvalidHandle
from rclpy.executors import Executor, ExternalShutdownException

_log = logging.getLogger(__name__)


def spin(executor: Executor) -> None:
    """``executor.spin()`` until the executor or its context is shut down."""
    while True:
        try:
            executor.spin()
        except InvalidHandle as exc:
            _log.debug('entity destroyed while the executor waited on it (%s): spinning on', exc)
            continue
        except ExternalShutdownException:
            return
        return
