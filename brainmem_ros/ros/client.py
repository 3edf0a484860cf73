"""``MemoryClient``: typed, timeout-bounded access to a running brainmem node for planners."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rclpy.node import Node

from brainmem_ros.errors import BrainMemError
from brainmem_ros.msg import Observation
from brainmem_ros.ros.convert import to_time
from brainmem_ros.srv import Consolidate, Forget, Reinforce, Retrieve, SetContext, StateOf, Stats, Store


class MemoryServiceError(BrainMemError):
    """The node answered success=false, or did not answer in time."""


def answer(client: Any, request: Any, timeout: float) -> Any | None:
    """The response of one ``call_async`` of ``client``, or None after ``timeout`` seconds.

    The node owning ``client`` must be spun by an executor on another thread. A request
    that timed out is dropped from the client's pending ones.
    """
    future = client.call_async(request)
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    if not done.wait(timeout):
        client.remove_pending_request(future)
        return None
    return future.result()


@dataclass(frozen=True)
class Recalled:
    """One retrieved memory, as a planner uses it."""

    id: int
    text: str
    score: float
    relevance: float
    recency: float
    importance: float
    activation: float
    strength: float
    valence: float
    path: tuple[int, ...]
    msg: Any


class MemoryClient:
    """Service clients of one brainmem node (``namespace`` is the robot's).

    Calls are ``call_async`` + wait with a timeout, so the node that owns this client
    must be spun by an executor in another thread (never call from a callback of
    the same single-threaded executor).
    """

    def __init__(self, node: Node, *, namespace: str = '', timeout: float = 10.0) -> None:
        self.node = node
        self.timeout = timeout
        prefix = namespace.rstrip('/') + '/' if namespace else ''
        self._clients = {name: node.create_client(srv, prefix + name) for name, srv in (
            ('store', Store), ('retrieve', Retrieve), ('reinforce', Reinforce),
            ('consolidate', Consolidate), ('forget', Forget), ('stats', Stats),
            ('set_context', SetContext), ('state_of', StateOf))}

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every service is available and the node serves a Stats call.

        ``wait_for_service`` sees the node's endpoints, but the node may not yet see this
        client's: Fast DDS then drops the response ("failed to send response (timeout)" in
        the node's log) and the first call goes unanswered. Stats changes nothing, so it
        is sent until one comes back (each try waits at most a second); the node's other
        services were discovered with it. A node's services answer as soon as they exist,
        before the node is active ("node inactive"): that answer means wait on.
        """
        deadline = time.monotonic() + (timeout or self.timeout)
        if not all(c.wait_for_service(timeout_sec=max(0.0, deadline - time.monotonic()))
                   for c in self._clients.values()):
            return False
        while (left := deadline - time.monotonic()) > 0:
            response = answer(self._clients['stats'], Stats.Request(), min(1.0, left))
            if response is not None and response.success:
                return True
            if response is not None:  # answered, not active yet: no need to ask a hundred times
                time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        return False

    def call(self, name: str, request: Any) -> Any:
        """Call a service; raise MemoryServiceError on timeout or success=false.

        A service that is not there now is one whose node is starting, restarting or gone:
        the call waits (up to the timeout) until the node is back and active, and shakes
        hands with it as :meth:`wait` does, so the request is not the first thing a new
        node hears from this client (its answer would be lost to discovery).
        """
        client = self._clients[name]
        if not client.service_is_ready() and not self.wait(self.timeout):
            srv = client.srv_name
            msg = (f'brainmem service {srv} is not available' if not client.service_is_ready() else
                   f'the brainmem node of {srv} did not become active within {self.timeout} s')
            raise MemoryServiceError(msg)
        response = answer(client, request, self.timeout)
        if response is None:
            msg = f'brainmem service {client.srv_name} did not answer within {self.timeout} s'
            raise MemoryServiceError(msg)
        if not response.success:
            raise MemoryServiceError(response.message)
        return response

    def store(self, text: str, *, share: bool = False, **fields: Any) -> Any:
        """Store an observation; returns the Store response (id, unit)."""
        obs = Observation(text=text)
        for key, value in fields.items():
            setattr(obs, key, value)
        return self.call('store', Store.Request(observation=obs, share=share))

    def retrieve(self, query: str, *, goal: str = '', state: str = '', top_k: int = 0,
                 **fields: Any) -> list[Recalled]:
        """Retrieve memories for a query/goal."""
        req = Retrieve.Request(query=query, goal=goal, current_state=state, top_k=top_k)
        for key, value in fields.items():
            setattr(req, key, value)
        return [Recalled(m.unit.id, m.unit.text, m.score, m.relevance, m.recency, m.importance,
                         m.activation, m.unit.strength, m.unit.valence, tuple(m.path), m)
                for m in self.call('retrieve', req).memories]

    def reinforce(self, ids: Sequence[int], reward: float, note: str = '', *, robot_id: str = '') -> Any:
        """Reward memories that were used (``robot_id``: of the fleet robot that shared them)."""
        return self.call('reinforce', Reinforce.Request(ids=list(ids), reward=float(reward), note=note,
                                                        robot_id=robot_id))

    def state_of(self, entity: str, *, attribute: str = '', as_of: float | None = None) -> Any:
        """What holds (or held at ``as_of``, POSIX seconds) of an entity: the StateOf response."""
        request = StateOf.Request(entity=entity, attribute=attribute)
        if as_of is not None:
            request.as_of = to_time(as_of)
        return self.call('state_of', request)

    def consolidate(self) -> Any:
        """Run a consolidation cycle."""
        return self.call('consolidate', Consolidate.Request())

    def forget(self, ids: Sequence[int], mode: str, *, confirm: bool = False) -> Any:
        """Marginalize / restore / protect / unprotect / delete."""
        return self.call('forget', Forget.Request(ids=list(ids), mode=mode, confirm=confirm))

    def stats(self) -> Any:
        """Counts and sizes."""
        return self.call('stats', Stats.Request())

    def set_context(self, *, episode_id: str = '', goal: str = '', clear_goal: bool = False) -> Any:
        """Set the current episode and goal."""
        return self.call('set_context', SetContext.Request(episode_id=episode_id, goal=goal,
                                                           clear_goal=clear_goal))
