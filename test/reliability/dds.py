"""A DDS client for talking to a node *process* that may die at any moment."""
# mypy: disallow-untyped-calls=False

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from brainmem_ros.ros.spin import spin


class NodeDiedError(RuntimeError):
    """The node process ended before it answered."""


class DdsClient:
    """One client node in its own rclpy context, spinning in a background thread.

    Service clients and publishers are created once and reused: creating a client
    per call costs a discovery round trip, which would dominate a hammering loop.
    """

    def __init__(self, name: str = 'reliability_client', *, namespace: str = '',
                 domain: int | None = None) -> None:
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node: Node = rclpy.create_node(name, context=self.context, namespace=namespace)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._clients: dict[str, Any] = {}
        self._publishers: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._thread.start()

    def _spin(self) -> None:
        spin(self._executor)  # returns once close() shuts the executor down

    def __enter__(self) -> DdsClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop spinning and free the context."""
        self._executor.shutdown()
        self._thread.join(10)  # before anything it waits on is destroyed under it
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def client(self, srv_type: Any, name: str) -> Any:
        """The (cached) service client for ``name``."""
        with self._lock:
            if name not in self._clients:
                self._clients[name] = self.node.create_client(srv_type, name)
            return self._clients[name]

    def publisher(self, msg_type: Any, topic: str, depth: int = 100) -> Any:
        """The (cached) reliable publisher of ``topic``."""
        with self._lock:
            if topic not in self._publishers:
                self._publishers[topic] = self.node.create_publisher(msg_type, topic, depth)
            return self._publishers[topic]

    def wait_for_service(self, srv_type: Any, name: str, *, timeout: float = 60.0,
                         alive: Callable[[], bool] | None = None) -> None:
        """Block until ``name`` is served; NodeDiedError if ``alive()`` turns false first."""
        client = self.client(srv_type, name)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if client.wait_for_service(timeout_sec=0.2):
                return
            if alive is not None and not alive():
                msg = f'the node died before serving {name}'
                raise NodeDiedError(msg)
        msg = f'service {name} not available after {timeout} s'
        raise TimeoutError(msg)

    def handshake(self, srv_type: Any, name: str, request: Any, *, timeout: float = 60.0,
                  alive: Callable[[], bool] | None = None) -> Any:
        """Send a request that changes nothing (Stats) until it is answered, a second per try.

        ``wait_for_service`` sees the node's endpoints, but the node may not yet see this
        client's: Fast DDS then drops the response and the first call goes unanswered (as
        ``MemoryClient.wait`` handles for the package's own client).
        """
        end = time.monotonic() + timeout
        while True:
            try:
                return self.call(srv_type, name, request, timeout=min(1.0, max(0.1, end - time.monotonic())),
                                 alive=alive)
            except TimeoutError:
                if time.monotonic() > end:
                    raise

    def call(self, srv_type: Any, name: str, request: Any, *, timeout: float = 60.0,
             alive: Callable[[], bool] | None = None) -> Any:
        """Call and wait; NodeDiedError when ``alive()`` turns false before the answer."""
        client = self.client(srv_type, name)
        future = client.call_async(request)
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        end = time.monotonic() + timeout
        while not done.wait(0.02):
            if alive is not None and not alive():
                client.remove_pending_request(future)
                msg = f'the node died while serving {name}'
                raise NodeDiedError(msg)
            if time.monotonic() > end:
                client.remove_pending_request(future)
                msg = f'service {name} did not answer within {timeout} s'
                raise TimeoutError(msg)
        return future.result()
