"""How long the node's service callbacks take, per service, for Stats.

A planner measures a call from its side: the round trip through DDS and both
executors. What the node spends inside the callback tells the two apart (a slow
memory or a slow transport), so Stats reports it next to the counts.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

import numpy as np

HELD = 1000  # the newest durations kept per service: enough for a p99 of the last minutes


@dataclass(frozen=True)
class Timing:
    """One service's handling times over the newest calls, in milliseconds."""

    calls: int  # calls since the node started
    p50_ms: float
    p99_ms: float
    max_ms: float


class ServiceTimings:
    """Durations of each service's callbacks; safe to use from the executor's threads."""

    def __init__(self, held: int = HELD) -> None:
        self._held = held
        self._lock = threading.Lock()
        self._durations: dict[str, deque[float]] = {}
        self._calls: dict[str, int] = {}

    def record(self, service: str, seconds: float) -> None:
        """One call of ``service`` took ``seconds``."""
        with self._lock:
            held = self._durations.get(service)
            if held is None:
                held = self._durations[service] = deque(maxlen=self._held)
            held.append(seconds)
            self._calls[service] = self._calls.get(service, 0) + 1

    def summary(self) -> dict[str, Timing]:
        """Each service called so far, with percentiles over its newest calls."""
        with self._lock:
            held = {name: np.asarray(d, dtype=np.float64) * 1e3 for name, d in self._durations.items()}
            calls = dict(self._calls)
        return {name: Timing(calls[name], round(float(np.percentile(ms, 50)), 3),
                             round(float(np.percentile(ms, 99)), 3), round(float(ms.max()), 3))
                for name, ms in sorted(held.items())}
