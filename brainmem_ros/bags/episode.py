"""A deterministic household episode and the rosbag2 bag that replays it.

A robot makes breakfast in the kitchen, fetches a book in the living room and comes back;
three things go wrong on the way (a dull knife, a shelf out of reach, a stuck window).
The bag holds what a real robot would publish: ``/brainmem/observations``
(``brainmem_ros/msg/Observation``, no pose of their own), ``/amcl_pose`` just before each
observation, and a few image captions on ``/captions``. Everything is fixed, so two runs
write the same messages byte for byte.

Command line::

    python -m brainmem_ros.bags.episode OUT_DIR [--storage mcap]

"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer, WriterError
from rosbags.typesys.store import Typestore

from brainmem_ros.bags.errors import BagError
from brainmem_ros.bags.reader import read_bag
from brainmem_ros.bags.typestore import deserialize, load_typestore

EPISODE_ID = 'household-1'
SOURCE = 'demo'
FRAME = 'map'
OBSERVATION_TOPIC = '/brainmem/observations'
POSE_TOPIC = '/amcl_pose'
CAPTION_TOPIC = '/captions'
OBSERVATION_TYPE = 'brainmem_ros/msg/Observation'
POSE_TYPE = 'geometry_msgs/msg/PoseWithCovarianceStamped'
CAPTION_TYPE = 'std_msgs/msg/String'
START_NS = 1_736_154_000 * 10**9  # 2025-01-06 09:00:00 UTC
POSE_LEAD_NS = 100_000_000  # the pose arrives 100 ms before the observation it locates
STORAGES = {'sqlite3': StoragePlugin.SQLITE3, 'mcap': StoragePlugin.MCAP}

# Converged AMCL: a few cm in x and y, about 6 degrees in yaw (row-major 6x6).
_COVARIANCE = np.diag([0.0025, 0.0025, 0.0, 0.0, 0.0, 0.01]).reshape(36)


@dataclass(frozen=True)
class Room:
    """An axis-aligned room of the map, ``xmin <= x < xmax`` and ``ymin <= y < ymax``."""

    name: str
    xmin: float
    ymin: float
    xmax: float
    ymax: float

    def contains(self, x: float, y: float) -> bool:
        """Whether the map point ``(x, y)`` lies in this room."""
        return self.xmin <= x < self.xmax and self.ymin <= y < self.ymax


# The door between the two rooms is in the wall x = 5 around y = 2.
ROOMS = (Room('kitchen', 0.0, 0.0, 5.0, 4.0), Room('living_room', 5.0, 0.0, 11.0, 5.0))


def room_at(x: float, y: float) -> str:
    """Name of the room holding map point ``(x, y)``, or ``''`` outside every room."""
    return next((room.name for room in ROOMS if room.contains(x, y)), '')


@dataclass(frozen=True)
class EpisodeStep:
    """One observation of the episode and where the robot stood when it made it.

    Attributes:
        stamp_ns: When it happened, nanoseconds since the epoch.
        room: The room of ``(x, y)``.
        type: ``observation``, ``action`` or ``outcome``.
        text: What the robot says happened.
        x: Robot position in the ``map`` frame, metres.
        y: Robot position in the ``map`` frame, metres.
        yaw_deg: Robot heading in the ``map`` frame, degrees in (-180, 180].

    """

    stamp_ns: int
    room: str
    type: str
    text: str
    x: float
    y: float
    yaw_deg: float


@dataclass(frozen=True)
class Caption:
    """A plain-text image caption published on ``/captions``."""

    stamp_ns: int
    text: str


@dataclass(frozen=True)
class Episode:
    """An episode: its id, its steps in time order and the captions seen meanwhile."""

    episode_id: str
    steps: tuple[EpisodeStep, ...]
    captions: tuple[Caption, ...]


# (seconds since the previous step, room, type, x, y, yaw in degrees, text). Landmarks:
# fridge (0.4, 3.6), counter with knife block and toaster along y = 3.6, kitchen table
# (2.0, 0.2-1.2); sofa and coffee table (8, 0.8-2.4), bookshelf with the high shelf
# (10.8, 3.4), window (9.5, 5.0).
_SCRIPT: tuple[tuple[float, str, str, float, float, float, str], ...] = (
    (0.0, 'kitchen', 'observation', 4.2, 0.6, 90.0,
     'I am in the kitchen next to my charging dock.'),
    (8.0, 'kitchen', 'observation', 2.0, 1.6, -90.0,
     'The red cup is on the kitchen table.'),
    (12.0, 'kitchen', 'action', 1.0, 3.0, 135.0,
     'I opened the fridge to get the milk.'),
    (6.0, 'kitchen', 'observation', 1.0, 3.0, 135.0,
     'The milk carton in the fridge is almost empty.'),
    (14.0, 'kitchen', 'action', 2.0, 1.6, -90.0,
     'I poured the milk into the red cup on the kitchen table.'),
    (7.0, 'kitchen', 'outcome', 2.0, 1.6, -90.0,
     'The milk is in the red cup and nothing was spilled.'),
    (9.0, 'kitchen', 'action', 1.0, 3.0, 135.0,
     'I closed the fridge door.'),
    (11.0, 'kitchen', 'action', 2.6, 3.0, 90.0,
     'I took a knife from the drawer to cut the bread.'),
    (8.0, 'kitchen', 'outcome', 2.6, 3.0, 90.0,
     'The knife was too dull to cut the bread.'),
    (10.0, 'kitchen', 'action', 2.2, 3.0, 90.0,
     'I took the bread knife from the knife block instead.'),
    (12.0, 'kitchen', 'outcome', 2.2, 3.0, 90.0,
     'The bread knife cut two slices of bread.'),
    (9.0, 'kitchen', 'action', 3.4, 3.0, 90.0,
     'I put the two slices of bread in the toaster.'),
    (15.0, 'kitchen', 'observation', 1.6, 2.4, 180.0,
     'The dishwasher is full of clean dishes.'),
    (18.0, 'living_room', 'action', 5.6, 2.0, 0.0,
     'I drove from the kitchen to the living room.'),
    (9.0, 'living_room', 'observation', 8.0, 1.6, -90.0,
     'The TV remote is on the sofa.'),
    (12.0, 'living_room', 'observation', 10.0, 3.4, 0.0,
     'The book the user asked for is on the high shelf.'),
    (7.0, 'living_room', 'action', 10.2, 3.4, 0.0,
     'I reached for the book on the high shelf with my arm.'),
    (6.0, 'living_room', 'outcome', 10.2, 3.4, 0.0,
     'I could not reach the book: the high shelf is too high.'),
    (20.0, 'living_room', 'action', 9.8, 3.0, 30.0,
     'I brought the chair from the corner to the bookshelf.'),
    (10.0, 'living_room', 'action', 10.2, 3.4, 0.0,
     'I stood on the chair to reach the book on the high shelf.'),
    (8.0, 'living_room', 'outcome', 10.2, 3.4, 0.0,
     'I got the book down from the high shelf.'),
    (12.0, 'living_room', 'action', 8.0, 3.0, -90.0,
     'I put the book on the coffee table.'),
    (15.0, 'living_room', 'observation', 9.5, 4.3, 90.0,
     'The living room window is open and the room is cold.'),
    (7.0, 'living_room', 'action', 9.5, 4.5, 90.0,
     'I tried to close the window.'),
    (8.0, 'living_room', 'outcome', 9.5, 4.5, 90.0,
     'The window latch is stuck and the window did not close.'),
    (19.0, 'kitchen', 'action', 4.0, 1.8, 180.0,
     'I drove back to the kitchen.'),
    (8.0, 'kitchen', 'observation', 3.4, 3.0, 90.0,
     'The toast is ready in the toaster.'),
    (12.0, 'kitchen', 'action', 2.0, 1.6, -90.0,
     'I put the toast on a plate next to the red cup.'),
)

# (index of the step it follows, seconds after that step, caption).
_CAPTIONS: tuple[tuple[int, float, str], ...] = (
    (0, 2.5, 'a kitchen with a white fridge and a wooden table'),
    (1, 2.5, 'a red cup on a wooden table'),
    (8, 2.0, 'a loaf of bread and a small knife on a cutting board'),
    (13, 3.0, 'a living room with a grey sofa and a tall bookshelf'),
    (22, 2.5, 'an open window with white curtains'),
)


def household_episode() -> Episode:
    """Return the household episode: 28 steps ~5-20 s apart from 09:00 UTC, 5 captions."""
    steps: list[EpisodeStep] = []
    stamp_ns = START_NS
    for gap_s, room, kind, x, y, yaw_deg, text in _SCRIPT:
        stamp_ns += round(gap_s * 1e9)
        steps.append(EpisodeStep(stamp_ns, room, kind, text, x, y, yaw_deg))
    captions = tuple(
        Caption(steps[index].stamp_ns + round(after_s * 1e9), text)
        for index, after_s, text in _CAPTIONS
    )
    return Episode(EPISODE_ID, tuple(steps), captions)


def write_episode_bag(
    out_dir: str | os.PathLike[str],
    *,
    storage: str = 'sqlite3',
    episode: Episode | None = None,
) -> Path:
    """Write ``episode`` (default: :func:`household_episode`) as a rosbag2 bag.

    Args:
        out_dir: The bag directory to create; it must not exist yet.
        storage: ``sqlite3`` or ``mcap``.
        episode: The episode to write.

    Returns:
        The bag directory.

    Raises:
        BagError: Unknown storage, ``out_dir`` exists or cannot be written.

    """
    if storage not in STORAGES:
        msg = f'unknown storage {storage!r} (expected one of: {", ".join(STORAGES)})'
        raise BagError(msg)
    if episode is None:
        episode = household_episode()
    store = load_typestore()
    path = Path(out_dir)
    try:
        with Writer(path, version=9, storage_plugin=STORAGES[storage]) as writer:
            # add_connection with the typestore embeds each type's definition and hash.
            connections = {
                topic: writer.add_connection(topic, msgtype, typestore=store)
                for topic, msgtype in (
                    (POSE_TOPIC, POSE_TYPE),
                    (OBSERVATION_TOPIC, OBSERVATION_TYPE),
                    (CAPTION_TOPIC, CAPTION_TYPE),
                )
            }
            for stamp_ns, topic, message, msgtype in _messages(episode, store):
                writer.write(connections[topic], stamp_ns, store.serialize_cdr(message, msgtype))
    except (WriterError, OSError) as err:
        msg = f'cannot write the episode bag: {err}'
        raise BagError(msg) from None
    return path


def read_episode(path: str | os.PathLike[str]) -> Episode:
    """Rebuild an :class:`Episode` from a bag written by :func:`write_episode_bag`.

    Each observation is located by the last ``/amcl_pose`` before it, the way the memory
    node attaches poses; its room is the room of that pose. If the observations carry
    several episode ids, the episode id is all of them, sorted and joined by commas.

    Raises:
        BagError: The bag cannot be read, or an observation has no pose before it.

    """
    store = load_typestore()
    steps: list[EpisodeStep] = []
    captions: list[Caption] = []
    episode_ids: set[str] = set()
    pose: Any = None
    for message in read_bag(path, topics=(POSE_TOPIC, OBSERVATION_TOPIC, CAPTION_TOPIC)):
        decoded: Any = deserialize(message, typestore=store)
        if message.topic == POSE_TOPIC:
            pose = decoded.pose.pose
        elif message.topic == CAPTION_TOPIC:
            captions.append(Caption(message.timestamp_ns, decoded.data))
        elif pose is None:
            msg = f'{path}: observation at {message.timestamp_ns} has no {POSE_TOPIC} before it'
            raise BagError(msg)
        else:
            x, y = float(pose.position.x), float(pose.position.y)
            stamp = decoded.header.stamp
            episode_ids.add(decoded.episode_id)
            steps.append(EpisodeStep(
                stamp.sec * 10**9 + stamp.nanosec, room_at(x, y), decoded.type, decoded.text,
                x, y, _yaw_deg(pose.orientation.z, pose.orientation.w),
            ))
    return Episode(','.join(sorted(episode_ids)), tuple(steps), tuple(captions))


def _messages(episode: Episode, store: Typestore) -> list[tuple[int, str, object, str]]:
    """Every message of the bag as (timestamp, topic, message, type), in timestamp order."""
    types = store.types
    out: list[tuple[int, str, object, str]] = []
    for step in episode.steps:
        pose_ns = step.stamp_ns - POSE_LEAD_NS
        half_yaw = math.radians(step.yaw_deg) / 2
        pose = types['geometry_msgs/msg/Pose'](
            position=types['geometry_msgs/msg/Point'](x=step.x, y=step.y, z=0.0),
            orientation=types['geometry_msgs/msg/Quaternion'](
                x=0.0, y=0.0, z=math.sin(half_yaw), w=math.cos(half_yaw)),
        )
        amcl = types[POSE_TYPE](
            header=_header(store, pose_ns),
            pose=types['geometry_msgs/msg/PoseWithCovariance'](pose=pose, covariance=_COVARIANCE),
        )
        # has_pose false: the node takes the pose from /amcl_pose, as on a real robot.
        observation = types[OBSERVATION_TYPE](
            header=_header(store, step.stamp_ns), text=step.text, source=SOURCE,
            episode_id=episode.episode_id, type=step.type, has_pose=False,
            pose=types['geometry_msgs/msg/Pose'](
                position=types['geometry_msgs/msg/Point'](x=0.0, y=0.0, z=0.0),
                orientation=types['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0),
            ),
            entities=[], actions=[], has_importance=False, importance=0.0,
            has_valence=False, valence=0.0,
        )
        out.append((pose_ns, POSE_TOPIC, amcl, POSE_TYPE))
        out.append((step.stamp_ns, OBSERVATION_TOPIC, observation, OBSERVATION_TYPE))
    for caption in episode.captions:
        out.append((caption.stamp_ns, CAPTION_TOPIC, types[CAPTION_TYPE](data=caption.text),
                    CAPTION_TYPE))
    out.sort(key=lambda item: item[0])
    return out


def _header(store: Typestore, stamp_ns: int) -> Any:
    sec, nanosec = divmod(stamp_ns, 10**9)
    stamp = store.types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec)
    return store.types['std_msgs/msg/Header'](stamp=stamp, frame_id=FRAME)


def _yaw_deg(qz: float, qw: float) -> float:
    """Heading of a yaw-only quaternion in degrees, in (-180, 180], rounded to 1e-6."""
    deg = math.degrees(2 * math.atan2(qz, qw)) % 360.0
    return round(deg - 360.0 if deg > 180.0 else deg, 6)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point: write the household episode bag to OUT_DIR."""
    parser = argparse.ArgumentParser(
        prog='python -m brainmem_ros.bags.episode',
        description='Write the deterministic household demo episode as a rosbag2 bag.',
    )
    parser.add_argument('out_dir', type=Path, help='bag directory to create (must not exist)')
    parser.add_argument('--storage', choices=sorted(STORAGES), default='sqlite3',
                        help='rosbag2 storage format (default: sqlite3)')
    args = parser.parse_args(argv)
    try:
        path = write_episode_bag(args.out_dir, storage=args.storage)
    except BagError as err:
        print(f'error: {err}', file=sys.stderr)
        return 1
    episode = household_episode()
    print(f'wrote {len(episode.steps)} observations, {len(episode.steps)} poses and '
          f'{len(episode.captions)} captions to {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
