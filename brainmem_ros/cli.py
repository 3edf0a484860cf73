"""``brainmem``: talk to a running brainmem node, replay bags, export and draw a memory.

    brainmem store "I opened the fridge" [--episode E] [--type action]
    brainmem retrieve "keep the medicine cold" [--goal G] [-k 5]
    brainmem reinforce 3 7 --reward 1.0
    brainmem stats | consolidate
    brainmem forget 3 --mode marginalize|restore|protect|unprotect|delete [--confirm]
    brainmem context --episode E --goal G
    brainmem state "blue umbrella" [--attribute location] [--as-of 2026-12-01T09:30]
    brainmem replay BAG [--rate R] [--topics T ...] [--remap FROM:=TO ...] [--loop]
    brainmem export DATA_DIR OUT_DIR
    brainmem viz DATA_DIR OUT.png

Exit status: 0 done, 1 error (``brainmem: error: ...``), 2 bad arguments, 3 replayed
messages nobody subscribed to, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from brainmem_ros.errors import BrainMemError


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface (every sub-command is documented in the README)."""
    parser = argparse.ArgumentParser(prog='brainmem', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--ns', type=namespace, default='',
                        help='namespace of the brainmem node (e.g. /robot1)')
    parser.add_argument('--timeout', type=timeout_seconds, default=10.0,
                        help='service timeout in seconds')
    sub = parser.add_subparsers(dest='command', required=True)
    p = sub.add_parser('store', help='store an observation')
    p.add_argument('text')
    p.add_argument('--episode', default='')
    p.add_argument('--type', default='observation')
    p.add_argument('--source', default='cli')
    p.add_argument('--share', action='store_true', help='share it with the fleet (fleet tier on)')
    p = sub.add_parser('retrieve', help='retrieve memories for a query and goal')
    p.add_argument('query')
    p.add_argument('--goal', default='')
    p.add_argument('--state', default='')
    p.add_argument('-k', '--top-k', type=top_k, default=5)
    p.add_argument('--episode', default='')
    p.add_argument('--include-marginalized', action='store_true')
    p.add_argument('--scope', choices=('local', 'fleet'), default='local',
                   help='fleet: merge the memories other robots shared (fleet tier on)')
    p = sub.add_parser('reinforce', help='reward memories that helped (or punish ones that misled)')
    p.add_argument('ids', type=memory_id, nargs='+')
    p.add_argument('--reward', type=finite_number, required=True)
    p.add_argument('--note', default='')
    p.add_argument('--robot', default='', help="the fleet robot that shared the memories ('' = this one)")
    sub.add_parser('stats', help='counts, queue depth, index and store size')
    sub.add_parser('consolidate', help='run one consolidation cycle now')
    p = sub.add_parser('forget', help='marginalize, restore, protect, unprotect or delete memories')
    p.add_argument('ids', type=memory_id, nargs='+')
    p.add_argument('--mode', required=True,
                   choices=['marginalize', 'restore', 'protect', 'unprotect', 'delete'])
    p.add_argument('--confirm', action='store_true', help='required for --mode delete')
    p = sub.add_parser('context', help='set the current episode and goal')
    p.add_argument('--episode', default='')
    p.add_argument('--goal', default='')
    p.add_argument('--clear-goal', action='store_true')
    p = sub.add_parser('state', help='what is (or was, --as-of) true of an entity, and since when')
    p.add_argument('entity')
    p.add_argument('--attribute', default='', help='location, holder, position, state, power, ...')
    p.add_argument('--as-of', type=parse_time, default=None,
                   help='POSIX seconds or an ISO 8601 local time (default: now)')
    p = sub.add_parser('replay', help='publish a rosbag2 (sqlite3 or mcap) into the ROS graph')
    p.add_argument('bag', type=Path)
    p.add_argument('--rate', type=positive_number, default=1.0)
    p.add_argument('--topics', nargs='+')
    p.add_argument('--loop', action='store_true')
    p.add_argument('--wait', type=positive_number, default=5.0, metavar='S',
                   help='seconds to wait for the subscribers of the bag topics (a busy graph takes longer)')
    p.add_argument('--clock', action='store_true',
                   help="publish the bag's time on /clock (for a node with use_sim_time:=true)")
    p.add_argument('--remap', nargs='*', default=[], metavar='FROM:=TO',
                   help='publish bag topic FROM on TO (relative TO: under --ns)')
    p.add_argument('--include-rosout', action='store_true',
                   help="also replay the bag's /rosout and /parameter_events (skipped by default)")
    p = sub.add_parser('export', help='write units and edges to JSONL and GraphML (offline)')
    p.add_argument('data_dir', type=Path)
    p.add_argument('out_dir', type=Path)
    p = sub.add_parser('viz', help='draw the memory graph to a PNG (offline)')
    p.add_argument('data_dir', type=Path)
    p.add_argument('out', type=Path)
    return parser


@contextmanager
def ros_node(name: str) -> Iterator[Any]:
    """An rclpy node spun in a background thread (clients wait on futures)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    # Not sys.argv: rcl would take a ``--remap FROM:=TO`` of replay for a remap of this node.
    # No rclpy signal handlers: on SIGTERM they shut the context down under a call in progress
    # (a traceback from deep in rcl); main() turns SIGINT and SIGTERM into a clean exit instead.
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(name)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    from brainmem_ros.ros.spin import SpinThread

    spinning = SpinThread(executor, name='brainmem-cli')
    try:
        yield node
    finally:
        spinning.stop()  # the loop ends before anything it waits on is destroyed under it
        node.destroy_node()
        rclpy.try_shutdown()


# Argument types: a value the messages cannot carry (rclpy would raise deep inside a
# call, or wrap it silently) or that means nothing (a negative timeout) is refused by
# argparse, with the argument's name, before any ROS work.

_UINT64_MAX = 2**64 - 1  # memory ids (uint64 in the .srv files)
_INT32_MAX = 2**31 - 1  # Retrieve.top_k; builtin_interfaces/Time.sec
_TIMEOUT_MAX_S = 1e6


def finite_number(text: str) -> float:
    """A float that is neither NaN nor infinite."""
    try:
        value = float(text)
    except ValueError:
        msg = f'not a number: {text!r}'
        raise argparse.ArgumentTypeError(msg) from None
    if not math.isfinite(value):
        msg = f'must be a finite number, got {text!r}'
        raise argparse.ArgumentTypeError(msg)
    return value


def positive_number(text: str) -> float:
    """A finite float above zero (a rate)."""
    value = finite_number(text)
    if value <= 0:
        msg = f'must be positive, got {text!r}'
        raise argparse.ArgumentTypeError(msg)
    return value


def timeout_seconds(text: str) -> float:
    """A positive number of seconds, at most a million (longer ones overflow the waits)."""
    value = positive_number(text)
    if value > _TIMEOUT_MAX_S:
        msg = f'must be at most {_TIMEOUT_MAX_S:.0f} s, got {text!r}'
        raise argparse.ArgumentTypeError(msg)
    return value


def _whole_number(text: str, high: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        msg = f'not a whole number: {text!r}'
        raise argparse.ArgumentTypeError(msg) from None
    if not 0 <= value <= high:
        msg = f'{what} must be within 0..{high}, got {text}'
        raise argparse.ArgumentTypeError(msg)
    return value


def memory_id(text: str) -> int:
    """A memory id: what a uint64 holds."""
    return _whole_number(text, _UINT64_MAX, 'a memory id')


def top_k(text: str) -> int:
    """Retrieve's top_k (an int32; 0 = the node's default)."""
    return _whole_number(text, _INT32_MAX, 'top_k')


def namespace(text: str) -> str:
    """A ROS namespace, made absolute (``robot1`` -> ``/robot1``; ``''`` or ``/`` = the root)."""
    if not text.strip('/'):
        return ''
    from rclpy.exceptions import InvalidNamespaceException
    from rclpy.validate_namespace import validate_namespace

    absolute = '/' + text.strip('/')
    try:
        validate_namespace(absolute)
    except InvalidNamespaceException as exc:
        # rclpy's message is several lines (the name with a caret under the fault).
        msg = f'not a ROS namespace: {text!r} ({str(exc).splitlines()[0].rstrip(":")})'
        raise argparse.ArgumentTypeError(msg) from None
    return absolute


def parse_time(text: str) -> float:
    """POSIX seconds from a number or an ISO 8601 time (local time when it names no zone).

    Zero would mean "now" to the node, and builtin_interfaces/Time holds int32 seconds:
    times outside (1970-01-01, 2038-01-19] are refused.
    """
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            msg = f'not POSIX seconds nor an ISO 8601 time: {text!r}'
            raise argparse.ArgumentTypeError(msg) from None
        try:
            seconds = when.timestamp()
        except (ValueError, OverflowError, OSError):  # years the C library cannot convert
            seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds < _INT32_MAX + 1):
        msg = f'{text!r} is outside what a ROS time holds (after 1970-01-01, before 2038-01-19)'
        raise argparse.ArgumentTypeError(msg)
    return seconds


def print_state(r: Any, out: Callable[[str], None] = print) -> None:
    """Facts of a StateOf response: those that hold (*) first, then history."""
    def when(t: Any) -> str:
        return datetime.fromtimestamp(t.sec + t.nanosec * 1e-9).isoformat(' ', 'seconds') if t.sec else '-'

    out(r.message)
    start = 0
    for i, count in enumerate(r.evidence_counts):
        ids = list(r.evidence[start:start + count])
        start += count
        pose = r.poses[i].pose.position
        where = f'  at ({pose.x:.2f}, {pose.y:.2f}) in {r.poses[i].header.frame_id}' if r.has_pose[i] else ''
        out(f'{"*" if r.holds[i] else " "} {r.entities[i]}.{r.attributes[i]} = {r.values[i]!r}  '
            f'{when(r.valid_from[i])} .. {when(r.valid_until[i])}  evidence {ids}{where}')


def print_recalled(items: Sequence[Any], out: Callable[[str], None] = print) -> None:
    """A readable table of retrieval results."""
    out(f'{"id":>4} {"score":>6} {"rel":>5} {"rec":>5} {"imp":>5} {"act":>5} {"str":>5}  text  [path]')
    for r in items:
        path = ' > '.join(map(str, r.path))
        out(f'{r.id:>4} {r.score:6.3f} {r.relevance:5.2f} {r.recency:5.2f} {r.importance:5.2f} '
            f'{r.activation:5.2f} {r.strength:5.2f}  {r.text[:70]}  [{path}]')


def remap_hint(bag_topic: str, readers: Sequence[str], ns: str) -> str:
    """How to send a bag topic nobody reads to the live topics of its type that have readers."""
    if not readers:
        return ''
    target = readers[0].removeprefix(ns + '/') if ns else readers[0]
    return (f'; subscribed topics of its type: {", ".join(readers)} '
            f'(replay onto one with --remap {bag_topic}:={target})')


def run_online(args: argparse.Namespace) -> int:
    """Sub-commands that talk to the node."""
    from brainmem_ros.ros.client import MemoryClient

    with ros_node('brainmem_cli') as node:
        if args.command == 'replay':
            from brainmem_ros.ros.replay import SKIPPED_TOPICS, parse_remaps, replay

            remap = parse_remaps(args.remap)
            skipped = () if args.include_rosout else SKIPPED_TOPICS
            report = replay(node, args.bag, rate=args.rate, topics=args.topics, loop=args.loop,
                            remap=remap, namespace=args.ns, skip=skipped, clock=args.clock,
                            wait_for_subscribers=args.wait)
            for name in report.unsubscribed:
                print(f'brainmem: warning: nobody subscribes to {report.published_as[name]} '
                      f'(bag topic {name}): its {report.per_topic[name]} messages went nowhere'
                      + remap_hint(name, report.readers.get(name, ()), args.ns), file=sys.stderr)
            print(f'replayed {report.messages} messages in {report.seconds:.1f} s: '
                  + ', '.join(f'{t} x{n} as {report.published_as[t]}' for t, n in report.per_topic.items()))
            return 3 if report.unsubscribed else 0
        client = MemoryClient(node, namespace=args.ns, timeout=args.timeout)
        if args.command == 'store':
            r = client.store(args.text, episode_id=args.episode, type=args.type, source=args.source,
                             share=args.share)
            print(f'{r.message}: #{r.id} entities={[e.name for e in r.unit.entities]} '
                  f'actions={list(r.unit.actions)} outcome={r.unit.outcome}')
        elif args.command == 'retrieve' and args.scope == 'fleet':
            from brainmem_ros.srv import Retrieve

            r = client.call('retrieve', Retrieve.Request(
                query=args.query, goal=args.goal, current_state=args.state, top_k=args.top_k,
                episode_id=args.episode, include_marginalized=args.include_marginalized, scope='fleet'))
            print(r.message)
            for m, robot in zip(r.memories, r.robot_ids, strict=True):
                print(f'{m.unit.id:>4} {m.score:6.3f} {robot or "(own)":>10}  {m.unit.text[:70]}')
        elif args.command == 'retrieve':
            print_recalled(client.retrieve(args.query, goal=args.goal, state=args.state,
                                           top_k=args.top_k, episode_id=args.episode,
                                           include_marginalized=args.include_marginalized))
        elif args.command == 'reinforce' and args.robot:
            from brainmem_ros.srv import Reinforce

            print(client.call('reinforce', Reinforce.Request(
                ids=args.ids, reward=args.reward, note=args.note, robot_id=args.robot)).message)
        elif args.command == 'reinforce':
            r = client.reinforce(args.ids, args.reward, args.note)
            print(r.message)
            for u in r.units:
                print(f'  #{u.id} strength={u.strength:.3f} valence={u.valence:+.2f}  {u.text[:60]}')
        elif args.command == 'stats':
            r = client.stats()
            print(f'units={r.units} active={r.active_units} marginalized={r.marginalized_units} '
                  f'protected={r.protected_units} edges={r.edges} queue={r.queue_depth} '
                  f'index={r.index_kind} store_bytes={r.store_bytes}')
            print(json.dumps(json.loads(r.details_json), indent=2))
        elif args.command == 'consolidate':
            print(client.consolidate().message)
        elif args.command == 'forget':
            print(client.forget(args.ids, args.mode, confirm=args.confirm).message)
        elif args.command == 'state':
            print_state(client.state_of(args.entity, attribute=args.attribute, as_of=args.as_of))
        elif args.command == 'context':
            r = client.set_context(episode_id=args.episode, goal=args.goal, clear_goal=args.clear_goal)
            print(f'episode={r.episode_id!r} goal={r.goal!r}')
    return 0


def describe(exc: BaseException) -> str:
    """One line for an expected error (an OSError names its file, not its errno)."""
    if isinstance(exc, OSError) and exc.strerror:
        return f'{exc.strerror}: {exc.filename}' if exc.filename else exc.strerror
    return str(exc)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``brainmem`` command."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    for arg in argv:
        try:
            arg.encode()
        except UnicodeEncodeError:
            # Bytes that are not UTF-8 reach Python as lone surrogates: no message carries them.
            parser.error(f'argument {os.fsencode(arg)!r} is not valid UTF-8')
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        if args.command == 'export':
            from brainmem_ros.export import export

            for path in export(args.data_dir, args.out_dir):
                print(f'wrote {path}')
            return 0
        if args.command == 'viz':
            from brainmem_ros.export import draw

            print(f'wrote {draw(args.data_dir, args.out)}')
            return 0
        return run_online(args)
    except (BrainMemError, OSError) as exc:
        print(f'brainmem: error: {describe(exc)}', file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print('brainmem: interrupted', file=sys.stderr)
        return 130
    except Terminated:
        print('brainmem: terminated', file=sys.stderr)
        return 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived: raised in the main thread, so open nodes and files close on the way out."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


if __name__ == '__main__':
    sys.exit(main())
