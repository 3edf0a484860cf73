"""Value types of the bag reader and the seam between it and its storage backends."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class BagMessage:
    """One recorded message, still serialized.

    Attributes:
        topic: Topic name as recorded, e.g. ``/amcl_pose``.
        msgtype: ROS 2 type name, e.g. ``std_msgs/msg/String``.
        timestamp_ns: Receive time in nanoseconds since the epoch (the bag's own clock).
        rawdata: The CDR-serialized message.

    """

    topic: str
    msgtype: str
    timestamp_ns: int
    rawdata: bytes


@dataclass(frozen=True)
class TopicInfo:
    """A topic of a bag, its type and how many messages it holds."""

    name: str
    msgtype: str
    count: int


class StorageReader(Protocol):
    """Reads one storage file (one split of a bag) of a given storage format."""

    def topics(self, path: Path) -> list[TopicInfo]:
        """Return every topic declared in ``path`` with its message count (possibly 0)."""
        ...

    def messages(self, path: Path, topics: frozenset[str] | None) -> Iterator[BagMessage]:
        """Yield the messages of ``path`` in timestamp order, only ``topics`` unless None."""
        ...
