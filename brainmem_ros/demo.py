"""``make demo``: a household episode remembered by a real node, then used by a planner.

Starts ``brainmem_node`` as its own process on a fresh data directory, walks it through
its lifecycle, replays a rosbag2 of a robot in a kitchen and living room (observations,
captions and ``/amcl_pose``), then acts as a planner: Retrieve for a goal, Reinforce what
it used (through the ``brainmem`` CLI), Retrieve again, and draw the memory graph.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
NS = '/brainmem'


def say(text: str = '') -> None:
    """Demo output (this module is a program, not library code)."""
    print(text, flush=True)


def lifecycle(node: Any, transition: int, label: str) -> None:
    """Drive the node's lifecycle through its standard change_state service."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState

    client = node.create_client(ChangeState, f'{NS}/brainmem/change_state')
    if not client.wait_for_service(timeout_sec=60.0):
        say(f'  lifecycle {label}: change_state service not available')
        raise SystemExit(1)
    future = client.call_async(ChangeState.Request(transition=Transition(id=transition)))
    end = time.monotonic() + 120
    while not future.done() and time.monotonic() < end:
        time.sleep(0.05)
    ok = future.done() and future.result().success
    node.destroy_client(client)
    say(f'  lifecycle {label}: {"ok" if ok else "FAILED"}')
    if not ok:
        raise SystemExit(1)


def announce_episode(node: Any, episode_id: str) -> None:
    """Publish the current episode on the node's ``episode`` topic once it listens."""
    from std_msgs.msg import String

    pub = node.create_publisher(String, f'{NS}/episode', 10)
    end = time.monotonic() + 30
    while pub.get_subscription_count() == 0 and time.monotonic() < end:
        time.sleep(0.05)
    pub.publish(String(data=episode_id))
    say(f'  episode {episode_id!r} announced on {NS}/episode')


def cli(*args: str) -> str:
    """Run the ``brainmem`` CLI as a user would, and show what it printed."""
    out = subprocess.run([sys.executable, '-m', 'brainmem_ros.cli', '--ns', NS, *args],
                         capture_output=True, text=True, timeout=120, check=False)
    say(f'  $ brainmem {" ".join(args)}')
    for line in (out.stdout + out.stderr).strip().splitlines():
        say(f'    {line}')
    if out.returncode != 0:
        raise SystemExit(out.returncode)
    return out.stdout


def main() -> int:
    """Run the demo; exit 0 when every step worked and the node shut down cleanly."""
    from lifecycle_msgs.msg import Transition

    from brainmem_ros.bags.episode import EPISODE_ID, write_episode_bag
    from brainmem_ros.cli import print_recalled, ros_node
    from brainmem_ros.export import draw
    from brainmem_ros.ros.client import MemoryClient
    from brainmem_ros.ros.replay import replay

    data = REPO / 'demo_data'
    shutil.rmtree(data, ignore_errors=True)
    memory_dir = data / 'memory'
    bag = data / 'household_episode'
    data.mkdir(parents=True)
    write_episode_bag(bag)
    say(f'== brainmem demo: fresh store in {memory_dir.relative_to(REPO)}')
    log = (data / 'node.log').open('wb')
    node_proc = subprocess.Popen(
        [sys.executable, '-m', 'brainmem_ros.ros.node', '--ros-args',
         '--params-file', str(REPO / 'config' / 'brainmem.yaml'), '-r', f'__ns:={NS}',
         '-p', f'data_dir:={memory_dir}', '-p', 'autostart:=false', '-p', 'use_sim_time:=true'],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        with ros_node('demo_planner') as node:
            say('== 1. lifecycle: configure (load the ONNX encoder, open the store), activate')
            lifecycle(node, Transition.TRANSITION_CONFIGURE, 'configure')
            lifecycle(node, Transition.TRANSITION_ACTIVATE, 'activate')
            client = MemoryClient(node, namespace=NS, timeout=30.0)
            client.wait(60.0)

            # The node runs on the bag's clock (use_sim_time, replay's /clock): the captions it
            # stamps itself are remembered at the bag's time, like the observations around them.
            say('== 2. replay the household episode bag (x20 speed, on its own clock): observations, '
                'captions, /amcl_pose')
            # As a task executive would: the episode is announced on the node's episode topic,
            # so the plain-text captions (which carry none) belong to it like the observations.
            announce_episode(node, EPISODE_ID)
            report = replay(node, bag, rate=20.0, remap={'/captions': f'{NS}/captions',
                                                         '/amcl_pose': f'{NS}/amcl_pose'}, clock=True)
            say('  ' + ', '.join(f'{t} x{n}' for t, n in report.per_topic.items()))
            expected = sum(n for t, n in report.per_topic.items() if t != '/amcl_pose')
            end = time.monotonic() + 60
            while client.stats().units + 0 < expected and time.monotonic() < end:
                time.sleep(0.2)
            cli('stats')

            goal = 'get the book from the top shelf'
            say(f'\n== 3. planner: retrieve for the goal "{goal}"')
            first = client.retrieve('how can I reach something high up?', goal=goal, top_k=5)
            print_recalled(first, say)

            used = [r.id for r in first[:2]]
            say(f'\n== 4. the plan worked: reinforce the memories it used {used}')
            cli('reinforce', *map(str, used), '--reward', '1.0', '--note', 'plan succeeded')

            say(f'\n== 5. retrieve again for "{goal}": the reinforced memories are stronger')
            second = client.retrieve('how can I reach something high up?', goal=goal, top_k=5)
            print_recalled(second, say)
            # Every memory of step 3 was used then (its recency rose); only the reinforced
            # ones also gained strength, which lifts their prior a little: a bounded lift that
            # reorders near-ties, never one that buries a better match.
            before = {r.id: r for r in first}
            for r in second:
                if r.id in before:
                    mark = 'reinforced' if r.id in used else 'not reinforced'
                    say(f'  #{r.id} ({mark}): score {before[r.id].score:.3f} -> {r.score:.3f}, '
                        f'strength {before[r.id].strength:.2f} -> {r.strength:.2f}')

            say('\n== 6. a failure is recalled; memories linked to it come back through the graph (a > b)')
            print_recalled(client.retrieve('the knife is dull', goal='make toast', top_k=4), say)
            picture = draw(memory_dir, memory_dir / 'memory_graph.png')
            say(f'\n== 7. memory graph drawn to {picture.relative_to(REPO)}')
    finally:
        node_proc.send_signal(signal.SIGINT)
        try:
            code = node_proc.wait(30)
        except subprocess.TimeoutExpired:
            node_proc.kill()
            code = -9
        log.close()
    say(f'== node shut down (exit code {code}); memories persist in {memory_dir.relative_to(REPO)}')
    return 0 if code == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
