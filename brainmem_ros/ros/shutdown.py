"""The node process's signals: SIGINT or SIGTERM stops it; a further one hurries the close.

The process handles both itself; rclpy's signal handlers are not installed. On a signal
they wake a thread of rclpy's own that triggers every executor's signal guard condition,
walking a global list without a lock, and then shuts the contexts down. Whatever the
process did meanwhile raced it: an executor shut down in the node's close freed a guard
condition under that thread (SIGSEGV in ``rcl_trigger_guard_condition``, about one exit
in a hundred), and a SIGTERM while the node was still being built or configured shut
the context down under the publishers being created (a configure failed with "context
is invalid", and once the process died of SIGSEGV). Here a signal only sets a flag and
wakes the main thread, which stops spinning and closes in order, with the context valid
until the end.

On the stop, the node stores what its ingest queue still holds and closes the store.
With a backlog of thousands of observations that takes seconds; a second signal then
drops what is still queued (counted, logged) and the close goes on, so the batches under
way are committed and the store is closed cleanly.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """SIGINT and SIGTERM, as the node process reads them.

    The first asks it to stop (:meth:`wait` returns); each later one calls the function
    given to :meth:`hurry_with`. Python runs the handler on the main thread between two
    bytecodes, so it may hold any lock: the handler only sets an event or starts a thread.
    """

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._hurry: Callable[[], None] | None = None
        self.received: list[int] = []

    def install(self) -> None:
        """Handle SIGINT and SIGTERM from now on (on the main thread, before rclpy starts)."""
        for s in _SIGNALS:
            signal.signal(s, self._on_signal)

    def hurry_with(self, hurry: Callable[[], None]) -> None:
        """Call ``hurry`` (on a thread of its own) on each signal after the first."""
        self._hurry = hurry

    def closed(self) -> None:
        """The close is over: ignore later signals. Python resets its handlers to the
        default while the interpreter finalizes, so a second Ctrl-C landing then ended a
        clean exit with -SIGINT; an ignored signal stays ignored."""
        for s in _SIGNALS:
            signal.signal(s, signal.SIG_IGN)

    @property
    def requested(self) -> bool:
        """Whether a signal has asked the process to stop."""
        return self._stop.is_set()

    def wait(self, running: Callable[[], bool], *, period: float = 0.5) -> bool:
        """Block until a stop is requested (True) or ``running()`` turns false (False)."""
        while not self._stop.wait(period):
            if not running():
                return False
        return True

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        del frame
        self.received.append(signum)
        if not self._stop.is_set():
            self._stop.set()
            return
        hurry = self._hurry
        if hurry is not None:
            threading.Thread(target=hurry, name='brainmem-hurry', daemon=True).start()
