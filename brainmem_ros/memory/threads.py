"""Ending the memory's background threads (vector cache filler, access writer, checkpoints,
index saver) the same way."""

from __future__ import annotations

import threading


def end_thread(thread: threading.Thread | None, *signals: threading.Event) -> None:
    """Set ``signals`` in order (its stop event, then what wakes it), then wait for ``thread``.

    Not when called from ``thread`` itself (a close reached from its own work), which
    could never be joined.
    """
    for signal in signals:
        signal.set()
    if thread is not None and thread is not threading.current_thread():
        thread.join()
