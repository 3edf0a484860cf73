"""Plain-SQL reader of rosbag2 sqlite3 (``.db3``) storage files.

rosbags' own Reader yields nothing from some real bags (their metadata lists topics in
another order than the database's topic ids), so the ``topics`` and ``messages`` tables
are read directly. Topic ids are per file: every split file is mapped on its own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from brainmem_ros.bags.errors import BagError
from brainmem_ros.bags.types import BagMessage, TopicInfo


class Sqlite3Storage:
    """Reads one ``.db3`` file of a rosbag2 bag, strictly read-only."""

    def topics(self, path: Path) -> list[TopicInfo]:
        """Return every topic of ``path`` with its message count (topics without messages too)."""
        with _database(path) as conn:
            declared = _declared_topics(conn, path)
            rows = conn.execute('SELECT topic_id, COUNT(*) FROM messages GROUP BY topic_id')
            counts = {tid: count for tid, count in rows}
        return [
            TopicInfo(name, msgtype, counts.get(tid, 0))
            for tid, (name, msgtype, _) in declared.items()
        ]

    def messages(self, path: Path, topics: frozenset[str] | None) -> Iterator[BagMessage]:
        """Yield the messages of ``path`` ordered by timestamp (then by insertion)."""
        with _database(path) as conn:
            declared = _declared_topics(conn, path)
            wanted = {tid: t for tid, t in declared.items() if topics is None or t[0] in topics}
            for name, _, fmt in wanted.values():
                if fmt != 'cdr':
                    msg = (
                        f'{path}: topic {name} is serialized as {fmt!r}, only cdr is '
                        'supported (leave it out with topics=)'
                    )
                    raise BagError(msg)
            if not wanted:
                return
            sql = 'SELECT topic_id, timestamp, data FROM messages'
            params: tuple[int, ...] = ()
            if topics is not None:
                params = tuple(wanted)
                sql += f' WHERE topic_id IN ({",".join("?" * len(params))})'
            for tid, stamp, data in conn.execute(sql + ' ORDER BY timestamp, id', params):
                if tid not in wanted or not isinstance(stamp, int) or not isinstance(data, bytes):
                    msg = f'{path} is damaged: message row ({tid!r}, {stamp!r}, ...) is invalid'
                    raise BagError(msg)
                name, msgtype, _ = wanted[tid]
                yield BagMessage(name, msgtype, stamp, data)


@contextmanager
def _database(path: Path) -> Iterator[sqlite3.Connection]:
    """Open ``path`` read-only; any SQLite failure inside becomes a BagError naming it."""
    wal = path.with_name(f'{path.name}-wal')
    if wal.exists() and wal.stat().st_size > 0:
        # An immutable open would silently skip the messages still in the write-ahead
        # log, and any other open may write a -shm file next to the bag.
        msg = (
            f'{path} has a non-empty {wal.name} (recording not closed cleanly?); '
            'copy the bag to a writable place and checkpoint it with sqlite3 first'
        )
        raise BagError(msg)
    # mode=ro and immutable=1: never write next to the bag (bags often sit in read-only
    # directories, and a -shm or -journal file would alter a recording we only read).
    uri = f'{path.resolve().as_uri()}?mode=ro&immutable=1'
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as err:
        msg = f'cannot open {path}: {err}'
        raise BagError(msg) from None
    try:
        yield conn
    # A damaged file can also hold TEXT that is not UTF-8, which sqlite3 fails to decode.
    except (sqlite3.Error, UnicodeDecodeError) as err:
        msg = f'{path} is not a readable rosbag2 database: {err}'
        raise BagError(msg) from None
    finally:
        conn.close()


def _declared_topics(conn: sqlite3.Connection, path: Path) -> dict[int, tuple[str, str, str]]:
    topics: dict[int, tuple[str, str, str]] = {}
    for row in conn.execute('SELECT id, name, type, serialization_format FROM topics'):
        tid, name, msgtype, fmt = row
        if not isinstance(tid, int) or not all(isinstance(v, str) for v in (name, msgtype, fmt)):
            msg = f'{path} is damaged: topics row {row!r} is invalid'
            raise BagError(msg)
        topics[tid] = (name, msgtype, fmt)
    return topics
