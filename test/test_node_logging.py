"""The core's Python logging reaches the node's ROS logger and /rosout."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from rcl_interfaces.msg import Log
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosutil import running_node, wait_for

from brainmem_ros.ros import rosout

pytestmark = pytest.mark.ros


def test_core_warnings_go_to_rosout_with_the_node_name(tmp_path: Path, model_paths: object,
                                                       capsys: Any) -> None:
    with running_node(tmp_path / 'mem', namespace='/r7') as (_, client):
        got: list[Log] = []
        lock = threading.Lock()

        def keep(msg: Log) -> None:
            with lock:
                got.append(msg)

        qos = QoSProfile(depth=100, durability=DurabilityPolicy.VOLATILE)  # type: ignore[no-untyped-call]
        client.create_subscription(Log, '/rosout', keep, qos)
        marker = 'edge changes of the store cannot be watched (test)'

        def seen() -> bool:
            logging.getLogger('brainmem_ros.memory.store').warning(marker)
            with lock:
                return any(marker in m.msg for m in got)

        assert wait_for(seen, period=0.5)
        with lock:
            record = next(m for m in got if marker in m.msg)
        assert record.name == 'r7.brainmem' and record.level == Log.WARN
        assert 'brainmem_ros.memory.store' in record.msg
        logging.getLogger('brainmem_ros.memory.store').debug('not at the default level')
    assert 'WARNING:brainmem_ros' not in capsys.readouterr().err
    # the node is gone: the core's records go back to Python's root logger
    assert not any(isinstance(h, rosout.RosLogHandler) for h in logging.getLogger('brainmem_ros').handlers)
    assert logging.getLogger('brainmem_ros').propagate


def test_every_severity_after_another_reaches_the_ros_logger(monkeypatch: pytest.MonkeyPatch) -> None:
    # rclpy refuses a second severity from a call site that logged another one first:
    # an INFO of the core, then its warnings, must all be logged.
    import rclpy.logging

    ros_logger = rclpy.logging.get_logger('brainmem_bridge_check')
    ros_logger.set_level(rclpy.logging.LoggingSeverity.DEBUG)  # type: ignore[no-untyped-call]
    handler = rosout.RosLogHandler(ros_logger)
    failed: list[logging.LogRecord] = []
    monkeypatch.setattr(handler, 'handleError', failed.append)
    for level in (logging.INFO, logging.WARNING, logging.DEBUG, logging.ERROR, logging.CRITICAL,
                  logging.WARNING, logging.INFO):
        handler.emit(logging.LogRecord('brainmem_ros.memory', level, __file__, 1, 'message %s', (level,),
                                       None))
    assert failed == []
