"""The node's exit: every observation received is stored, unless asked again to hurry.

On SIGINT or SIGTERM the node stops serving, stores what its ingest queue still holds
and closes the store. With a backlog of thousands of observations that takes seconds,
and a second Ctrl-C used to raise ``KeyboardInterrupt`` inside the ingest's join: the
process aborted ("terminate called without an active exception") with most of the
backlog unstored and the store not closed. During the close, a further SIGINT or
SIGTERM now drops what is still queued (counted, logged) and the close goes on, so the
batches under way are committed and the store is closed cleanly.

The close waits for rclpy's own handling of the signal first (:func:`signal_handled`).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Protocol

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def hurried_by_signals(hurry: Callable[[], None]) -> Iterator[None]:
    """While the block runs (on the main thread), SIGINT and SIGTERM call ``hurry`` on a
    thread of its own instead of interrupting the block."""
    def on_signal(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        # Not here: a handler runs between two bytecodes of the main thread, which may
        # hold a lock ``hurry`` needs.
        threading.Thread(target=hurry, name='brainmem-hurry', daemon=True).start()

    previous = {s: signal.signal(s, on_signal) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


class _Context(Protocol):
    def ok(self) -> bool: ...


def signal_handled(context: _Context, *, timeout: float = 5.0, period: float = 0.005) -> bool:
    """Wait until rclpy has finished handling a SIGINT: ``context`` is shut down.

    rclpy's handler raises ``KeyboardInterrupt`` in the main thread and wakes a thread
    of its own, which triggers every executor's signal guard condition, then shuts the
    contexts down. It walks the list of guard conditions without a lock, so an executor
    shut down meanwhile (the node's close shuts two down) frees one under it: the node
    process died of SIGSEGV in ``rcl_trigger_guard_condition`` in about one exit in a
    hundred. Once the context is shut down, that thread is done with the guard
    conditions. False if ``timeout`` passed first (rclpy's handlers not installed).
    """
    end = time.monotonic() + timeout
    while context.ok():
        if time.monotonic() >= end:
            return False
        time.sleep(period)
    return True
