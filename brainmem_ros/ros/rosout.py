"""The memory core's Python logging, routed into the node's ROS logger.

The core logs through :mod:`logging` (it never imports rclpy). Without this bridge
its warnings reach stderr as bare ``WARNING:brainmem_ros...`` lines, with no node
name and nothing on ``/rosout``.
"""

from __future__ import annotations

import logging
from typing import Any

CORE_LOGGER = 'brainmem_ros'


class RosLogHandler(logging.Handler):
    """A :class:`logging.Handler` that writes records to an rclpy logger."""

    def __init__(self, ros_logger: Any) -> None:
        super().__init__()
        self._ros_logger = ros_logger

    def emit(self, record: logging.LogRecord) -> None:
        """Forward one record (its logger name kept as a prefix)."""
        try:
            text = f'{record.name}: {record.getMessage()}'
            if record.exc_info:
                text += '\n' + logging.Formatter().formatException(record.exc_info)
            # rclpy keys a call site's severity on its first call there and refuses any
            # other severity from it afterwards (ValueError), so each severity has a call
            # of its own: one INFO first would otherwise lose every later warning.
            level, log = record.levelno, self._ros_logger
            if level >= logging.CRITICAL:
                log.fatal(text)
            elif level >= logging.ERROR:
                log.error(text)
            elif level >= logging.WARNING:
                log.warning(text)
            elif level >= logging.INFO:
                log.info(text)
            else:
                log.debug(text)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)


def attach(ros_logger: Any) -> RosLogHandler:
    """Route the core's records to ``ros_logger`` (and no longer to the root logger)."""
    handler = RosLogHandler(ros_logger)
    core = logging.getLogger(CORE_LOGGER)
    core.addHandler(handler)
    core.propagate = False
    # Same numbers in rcutils and logging (10 debug ... 50 fatal): the ROS log level rules.
    core.setLevel(int(ros_logger.get_effective_level()))
    return handler


def detach(handler: RosLogHandler) -> None:
    """Undo :func:`attach`; the root logger gets the records back with the last handler."""
    core = logging.getLogger(CORE_LOGGER)
    core.removeHandler(handler)
    if not any(isinstance(h, RosLogHandler) for h in core.handlers):
        core.propagate = True
        core.setLevel(logging.NOTSET)
