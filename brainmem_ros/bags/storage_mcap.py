"""Reader of rosbag2 mcap storage files, built on the ``mcap`` library."""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.records import Channel, Schema
from zstandard import ZstdError

from brainmem_ros.bags.errors import BagError
from brainmem_ros.bags.types import BagMessage, TopicInfo

# What a truncated or damaged file makes the mcap library raise besides its own McapError
# (seen by truncating and bit-flipping real bags): short reads, bad UTF-8 in records,
# missing ids, seeks to absurd offsets, absurd record lengths (read() then fails to
# allocate or overflows), and the chunk decompressors (zstd; lz4 raises RuntimeError).
_DAMAGE = (
    McapError, struct.error, EOFError, ValueError, KeyError, OSError, OverflowError,
    MemoryError, RuntimeError, ZstdError,
)


class McapStorage:
    """Reads one ``.mcap`` file of a rosbag2 bag."""

    def topics(self, path: Path) -> list[TopicInfo]:
        """Return the topics of ``path`` with message counts.

        Counts come from the summary section when the file has one; a file without it
        (a recording that was not closed) is scanned, and then only topics with at least
        one message are seen.
        """
        with path.open('rb') as stream:
            try:
                summary = make_reader(stream).get_summary()
                if summary is not None and summary.statistics is not None:
                    counts = summary.statistics.channel_message_counts
                    return [
                        TopicInfo(channel.topic, _msgtype(path, channel, summary.schemas),
                                  counts.get(channel.id, 0))
                        for channel in summary.channels.values()
                    ]
                stream.seek(0)
                seen = Counter(
                    (channel.topic, _msgtype(path, channel, {schema.id: schema} if schema else {}))
                    for schema, channel, _ in make_reader(stream).iter_messages(
                        log_time_order=False)
                )
            except _DAMAGE as err:
                raise _damaged(path, err) from None
        return [TopicInfo(topic, msgtype, count) for (topic, msgtype), count in seen.items()]

    def messages(self, path: Path, topics: frozenset[str] | None) -> Iterator[BagMessage]:
        """Yield the messages of ``path`` in log-time order."""
        with path.open('rb') as stream:
            try:
                records = make_reader(stream).iter_messages(topics=topics, log_time_order=True)
                for schema, channel, message in records:
                    if channel.message_encoding != 'cdr':
                        msg = (
                            f'{path}: topic {channel.topic} is encoded as '
                            f'{channel.message_encoding!r}, only cdr is supported '
                            '(leave it out with topics=)'
                        )
                        raise BagError(msg)
                    schemas = {schema.id: schema} if schema else {}
                    yield BagMessage(
                        channel.topic,
                        _msgtype(path, channel, schemas),
                        message.log_time,
                        bytes(message.data),
                    )
            except _DAMAGE as err:
                raise _damaged(path, err) from None


def _msgtype(path: Path, channel: Channel, schemas: dict[int, Schema]) -> str:
    schema = schemas.get(channel.schema_id)
    if schema is None or not schema.name:
        msg = f'{path}: topic {channel.topic} has no schema, its message type is unknown'
        raise BagError(msg)
    return schema.name


def _damaged(path: Path, err: Exception) -> BagError:
    return BagError(f'{path} is damaged or truncated: {type(err).__name__}: {err}')
