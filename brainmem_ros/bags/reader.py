"""Read rosbag2 bags without ROS: sqlite3 (also split into several files) and mcap storage.

Example:
    >>> from brainmem_ros.bags import read_bag
    >>> for message in read_bag('data/household_episode', topics=['/captions']):
    ...     print(message.timestamp_ns, message.msgtype)  # doctest: +SKIP

"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterable, Iterator, Mapping
from operator import attrgetter
from pathlib import Path

from brainmem_ros.bags.layout import locate
from brainmem_ros.bags.storage_mcap import McapStorage
from brainmem_ros.bags.storage_sqlite3 import Sqlite3Storage
from brainmem_ros.bags.types import BagMessage, StorageReader, TopicInfo

__all__ = ['BagMessage', 'TopicInfo', 'list_topics', 'read_bag']

STORAGES: Mapping[str, StorageReader] = {
    'sqlite3': Sqlite3Storage(),
    'mcap': McapStorage(),
}


def read_bag(
    path: str | os.PathLike[str],
    *,
    topics: Iterable[str] | None = None,
) -> Iterator[BagMessage]:
    """Yield the messages of the bag at ``path`` in timestamp order.

    Args:
        path: A rosbag2 directory (with or without ``metadata.yaml``), or one ``.db3``
            or ``.mcap`` file.
        topics: Only these topics (a single name is accepted too); None: all topics.
            Names absent from the bag select nothing.

    Returns:
        An iterator of still-serialized messages; messages with the same timestamp keep
        their recording order. Nothing is ever written next to the bag.

    Raises:
        BagError: The path does not exist, its storage is unknown or unsupported, or a
            file is damaged (raised before iterating when it shows in the file's header,
            else while iterating).

    """
    layout = locate(Path(path))
    wanted = _topic_filter(topics)
    if wanted is not None and not wanted:
        return iter(())
    storage = STORAGES[layout.storage]
    streams = [storage.messages(file, wanted) for file in layout.files]
    if len(streams) == 1:
        return streams[0]
    # Split files normally follow each other in time, but a merge costs little and stays
    # right when they overlap; heapq.merge keeps ties in file order.
    return heapq.merge(*streams, key=attrgetter('timestamp_ns'))


def list_topics(path: str | os.PathLike[str]) -> list[TopicInfo]:
    """Return the topics of the bag at ``path``, sorted by name, with their message counts.

    Counts come from the stored messages, not from ``metadata.yaml`` (which real bags do not
    always get right). A topic recorded with two types is listed once per type.

    Raises:
        BagError: As for :func:`read_bag`.

    """
    layout = locate(Path(path))
    storage = STORAGES[layout.storage]
    counts: dict[tuple[str, str], int] = {}
    for file in layout.files:
        for topic in storage.topics(file):
            key = (topic.name, topic.msgtype)
            counts[key] = counts.get(key, 0) + topic.count
    return [TopicInfo(name, msgtype, count) for (name, msgtype), count in sorted(counts.items())]


def _topic_filter(topics: Iterable[str] | None) -> frozenset[str] | None:
    if topics is None:
        return None
    if isinstance(topics, str):
        return frozenset((topics,))
    return frozenset(topics)
