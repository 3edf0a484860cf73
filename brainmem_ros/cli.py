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
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
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
    parser.add_argument('--ns', default='', help='namespace of the brainmem node (e.g. /robot1)')
    parser.add_argument('--timeout', type=float, default=10.0, help='service timeout in seconds')
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
    p.add_argument('-k', '--top-k', type=int, default=5)
    p.add_argument('--episode', default='')
    p.add_argument('--include-marginalized', action='store_true')
    p.add_argument('--scope', choices=('local', 'fleet'), default='local',
                   help='fleet: merge the memories other robots shared (fleet tier on)')
    p = sub.add_parser('reinforce', help='reward memories that helped (or punish ones that misled)')
    p.add_argument('ids', type=int, nargs='+')
    p.add_argument('--reward', type=float, required=True)
    p.add_argument('--note', default='')
    p.add_argument('--robot', default='', help="the fleet robot that shared the memories ('' = this one)")
    sub.add_parser('stats', help='counts, queue depth, index and store size')
    sub.add_parser('consolidate', help='run one consolidation cycle now')
    p = sub.add_parser('forget', help='marginalize, restore, protect, unprotect or delete memories')
    p.add_argument('ids', type=int, nargs='+')
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
    p.add_argument('--rate', type=float, default=1.0)
    p.add_argument('--topics', nargs='*')
    p.add_argument('--loop', action='store_true')
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

    rclpy.init()
    node = rclpy.create_node(name)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    from brainmem_ros.ros.spin import spin

    thread = threading.Thread(target=spin, args=(executor,), daemon=True)
    thread.start()
    try:
        yield node
    finally:
        executor.shutdown()
        thread.join(5)  # before anything it waits on is destroyed under it
        node.destroy_node()
        rclpy.try_shutdown()
        thread.join(2)


def parse_time(text: str) -> float:
    """POSIX seconds from a number or an ISO 8601 time (local time when it names no zone)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        msg = f'not POSIX seconds nor an ISO 8601 time: {text!r}'
        raise argparse.ArgumentTypeError(msg) from None


def call_state_of(node: Any, args: argparse.Namespace) -> Any:
    """One StateOf call; MemoryServiceError on timeout or success=false."""
    from brainmem_ros.ros.client import MemoryServiceError
    from brainmem_ros.ros.convert import to_time
    from brainmem_ros.srv import StateOf

    prefix = args.ns.rstrip('/') + '/' if args.ns else ''
    client = node.create_client(StateOf, prefix + 'state_of')
    try:
        if not client.wait_for_service(timeout_sec=args.timeout):
            msg = f'brainmem service {client.srv_name} is not available'
            raise MemoryServiceError(msg)
        future = client.call_async(StateOf.Request(entity=args.entity, attribute=args.attribute,
                                                   as_of=to_time(args.as_of)))
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        if not done.wait(args.timeout):
            client.remove_pending_request(future)
            msg = f'brainmem service {client.srv_name} did not answer within {args.timeout} s'
            raise MemoryServiceError(msg)
        response = future.result()
        if not response.success:
            raise MemoryServiceError(response.message)
        return response
    finally:
        node.destroy_client(client)


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


def run_online(args: argparse.Namespace) -> int:
    """Sub-commands that talk to the node."""
    from brainmem_ros.ros.client import MemoryClient

    with ros_node('brainmem_cli') as node:
        if args.command == 'replay':
            from brainmem_ros.ros.replay import SKIPPED_TOPICS, parse_remaps, replay

            remap = parse_remaps(args.remap)
            skipped = () if args.include_rosout else SKIPPED_TOPICS
            report = replay(node, args.bag, rate=args.rate, topics=args.topics, loop=args.loop,
                            remap=remap, namespace=args.ns, skip=skipped)
            for name in report.unsubscribed:
                print(f'brainmem: warning: nobody subscribes to {report.published_as[name]} '
                      f'(bag topic {name}): its messages went nowhere', file=sys.stderr)
            print(f'replayed {report.messages} messages in {report.seconds:.1f} s: '
                  + ', '.join(f'{t} x{n} as {report.published_as[t]}' for t, n in report.per_topic.items()))
            return 3 if report.per_topic and len(report.unsubscribed) == len(report.per_topic) else 0
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
            print_state(call_state_of(node, args))
        elif args.command == 'context':
            r = client.set_context(episode_id=args.episode, goal=args.goal, clear_goal=args.clear_goal)
            print(f'episode={r.episode_id!r} goal={r.goal!r}')
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``brainmem`` command."""
    args = build_parser().parse_args(argv)
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
    except BrainMemError as exc:
        print(f'brainmem: {exc}', file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print('brainmem: interrupted', file=sys.stderr)
        return 130


if __name__ == '__main__':
    sys.exit(main())
