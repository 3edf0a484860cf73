"""Spinning an rclpy executor that survives entities destroyed while it waits.

rclpy (Jazzy) builds each wait set from the node's entities without excluding ones
whose destruction another thread has just requested; entering such an entity raises
``InvalidHandle`` out of ``Executor.spin`` and the executor thread ends, after which
nothing is served (ros2/rclpy#1284). The node destroys its publishers and
subscriptions on deactivate from a service callback, and clients (replay, the
command line) destroy theirs while their executor spins: the next pass of the loop no
longer sees the destroyed entity, so spinning on is the fix. ``Executor.shutdown``
from another thread races the same way with the executor's own guard condition; then
spinning simply ends, as asked.
"""

from __future__ import annotations

import logging
import threading

from rclpy.exceptions import InvalidHandle
from rclpy.executors import Executor, ExternalShutdownException
from rclpy.task import Future

_log = logging.getLogger(__name__)


def spin(executor: Executor, *, until: Future | None = None) -> None:
    """``executor.spin()`` until the executor or its context is shut down, or ``until`` is done.

    ``until`` lets the owner end the loop before it shuts the executor down, so that
    the executor's guard conditions are not destroyed under a thread still waiting on
    them (``Executor.shutdown`` destroys them at once, without waiting for spin).
    """
    while until is None or not until.done():
        try:
            if until is None:
                executor.spin()
            else:
                executor.spin_until_future_complete(until)
        except ExternalShutdownException:
            return
        except Exception as exc:
            # Executor.shutdown() from another thread destroys the executor's own guard
            # condition while spin may be building a wait set with it (AttributeError
            # or InvalidHandle): the shutdown that was asked for has happened.
            if _shut_down(executor):
                return
            if not isinstance(exc, InvalidHandle):
                raise
            _log.debug('entity destroyed while the executor waited on it (%s): spinning on', exc)
            continue
        return


def _shut_down(executor: Executor) -> bool:
    return bool(getattr(executor, '_is_shutdown', False)) or not executor.context.ok()


class SpinThread:
    """``executor`` spun on a daemon thread of its own until :meth:`stop`.

    :meth:`stop` ends the thread's loop before it shuts the executor down: shut down while
    the thread waited, the executor's guard conditions were destroyed under it (the node
    process died of SIGSEGV in about one exit in five), or the thread kept the nodes'
    entities in its wait set and a ``destroy_node`` after the join's timeout waited for them
    forever (a test's client node, once, in ``Publisher.destroy``).
    """

    def __init__(self, executor: Executor, *, name: str = 'brainmem-spin') -> None:
        self.executor = executor
        self._stop = Future(executor=executor)
        self._thread = threading.Thread(target=spin, args=(executor,), kwargs={'until': self._stop},
                                        name=name, daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        """Whether the thread still spins."""
        return self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        """End the loop (after the callback under way), then shut the executor down."""
        if not self._stop.done():
            self._stop.set_result(None)  # wakes the executor: its loop returns
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self.executor.shutdown()
