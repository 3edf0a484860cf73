"""Helpers for tests that run the node over real DDS, in-process or as a process."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import rclpy
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.node import Node
from rclpy.parameter import Parameter

from brainmem_ros.ros.client import answer
from brainmem_ros.ros.spin import SpinThread

REPO = Path(__file__).resolve().parent.parent


# A new client is made after this long without the service in sight. In two of about
# ten full suite runs a client waited out its whole timeout (20 s, then 60 s) for the
# lifecycle service of a node active in the same process, while the same test passes
# in 2 s alone. A new client did not always help: the likelier cause is the domain's
# graph (see own_namespace).
_REDISCOVER_S = 10.0

# One client per (node, service type, name), kept for the node's life as a planner keeps
# its clients, instead of one made and destroyed per call (a dozen in a row in one
# lifecycle test): fewer clients to discover. This alone did not end the lifecycle
# test's 60 s waits (one more came in a fresh-clone run with it).
_clients: weakref.WeakKeyDictionary[Node, dict[tuple[Any, str], Any]] = weakref.WeakKeyDictionary()
_clients_lock = threading.Lock()


def _client(node: Node, srv_type: Any, name: str, *, stale: Any = None) -> Any:
    """The node's client of ``name``; a new one in place of ``stale`` if that is still kept."""
    with _clients_lock:
        kept = _clients.setdefault(node, {})
        client = kept.get((srv_type, name))
        if client is None or client is stale:
            if client is not None:
                node.destroy_client(client)
            client = node.create_client(srv_type, name)
            kept[(srv_type, name)] = client
        return client


def call(node: Node, srv_type: Any, name: str, request: Any, *, timeout: float = 30.0) -> Any:
    """Call a service with call_async and a timeout (the executor spins elsewhere)."""
    client = _client(node, srv_type, name)
    end = time.monotonic() + timeout
    while not client.wait_for_service(timeout_sec=min(_REDISCOVER_S, max(0.0, end - time.monotonic()))):
        if time.monotonic() >= end:
            msg = f'service {name} not available'
            raise TimeoutError(msg)
        print(f'service {name} not in sight after {_REDISCOVER_S:.0f} s: a new client', flush=True)
        client = _client(node, srv_type, name, stale=client)
    response = answer(client, request, timeout)
    if response is None:
        msg = f'service {name} did not answer within {timeout} s'
        raise TimeoutError(msg)
    return response


def own_namespace(tag: str = 'node') -> str:
    """A namespace no other test's node uses: ``running_node``'s default.

    rmw_fastrtps calls a service available only when the domain's graph holds as many
    request readers as response writers under its names, counted over every participant,
    stale ones included. Twice in fresh-clone runs of the suite, a node's
    'brainmem/change_state' stayed out of sight of every new client for 60 s while its other
    services answered; the likely cause is a node of an earlier test (or a killed node
    process) still half in the graph under the same names.
    """
    return f'/{tag}_{os.getpid()}_{next(_namespaces)}'


_namespaces = itertools.count()
_domains = itertools.count(1)


def own_domain() -> int:
    """A DDS domain no other test of this session uses, for a node process and its client.

    With ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` a participant looks for its peers at a
    bounded range of participant ids on this host. Late in a full run, a node process and a
    new client in the session's domain saw each other no more (their ids past that range):
    a node active and serving, and 'service store not available after 60 s' for its client,
    in three full runs, never alone. In a domain of their own they are its first two.
    """
    session = int(os.environ.get('ROS_DOMAIN_ID', '0'))
    return 1 + (session + next(_domains) * 7) % 200  # 1..200: Fast DDS's ports allow up to 232


@contextmanager
def running_node(data_dir: Path, *, namespace: str | None = None, extra: dict[str, Any] | None = None,
                 domain: int | None = None) -> Iterator[tuple[Any, Node]]:
    """A configured, active BrainMemNode plus a client node, spinning in a thread.

    The two share ``namespace``: by default one of their own (``own_namespace``); ``''``
    for a test that speaks to the node through root-namespace names.
    """
    namespace = own_namespace() if namespace is None else namespace
    from brainmem_ros.ros.node import BrainMemNode

    context = Context()
    rclpy.init(context=context, domain_id=domain)
    overrides = [Parameter('data_dir', value=str(data_dir)), Parameter('markers_period_s', value=0.0)]
    overrides += [Parameter(k, value=v) for k, v in (extra or {}).items()]
    node = BrainMemNode(context=context, namespace=namespace, parameter_overrides=overrides,
                        automatically_declare_parameters_from_overrides=False)
    client = rclpy.create_node('test_client', context=context, namespace=namespace)
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    executor.add_node(node)
    executor.add_node(client)
    spinning: SpinThread | None = None
    try:
        assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
        spinning = SpinThread(executor, name='test-node')
        yield node, client
    finally:
        if spinning is not None:
            spinning.stop()  # the loop ends before anything it waits on is destroyed under it
        else:
            executor.shutdown()
        node.release()
        node.destroy_node()
        client.destroy_node()
        rclpy.try_shutdown(context=context)


def dds_participants() -> int:
    """Fast DDS participants alive in this process: each runs one event thread, "dds.ev.<n>"."""
    count = 0
    for task in os.listdir('/proc/self/task'):
        try:
            with open(f'/proc/self/task/{task}/comm') as comm:
                count += comm.read().startswith('dds.ev')
        except OSError:
            continue  # a thread that ended while we looked
    return count


def node_env(domain: int | None = None) -> dict[str, str]:
    """Environment for a process that runs this checkout's code (in ``domain``, if given)."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join([str(REPO), env.get('PYTHONPATH', '')])
    env.setdefault('PYTHONUNBUFFERED', '1')
    # A crash of the process (a signal in native code) leaves the Python stacks of every
    # thread in its log, not just an exit code.
    env.setdefault('PYTHONFAULTHANDLER', '1')
    if domain is not None:
        env['ROS_DOMAIN_ID'] = str(domain)
    return env


@contextmanager
def node_process(args: list[str], *, log: Path, domain: int | None = None
                 ) -> Iterator[subprocess.Popen[bytes]]:
    """``brainmem_node`` as its own process (in ``domain``, if given); SIGINT and a bounded
    wait on exit."""
    with log.open('wb') as out:
        proc = subprocess.Popen([sys.executable, '-m', 'brainmem_ros.ros.node', *args],
                                env=node_env(domain), stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)


def wait_for(predicate: Any, *, timeout: float = 20.0, period: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` passes."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(period)
    return bool(predicate())
