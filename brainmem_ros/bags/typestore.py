"""A rosbags typestore for ROS 2 Jazzy that also knows brainmem_ros's own messages.

The package's ``.msg`` files are parsed at run time (no generated code, no ROS install):
from ``<repo>/msg`` in a source checkout, else from ``<prefix>/share/brainmem_ros/msg``,
where ``rosidl_generate_interfaces`` installs them.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from rosbags.serde import SerdeError
from rosbags.typesys import Stores, TypesysError, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from brainmem_ros.bags.errors import BagError
from brainmem_ros.bags.types import BagMessage

PACKAGE = 'brainmem_ros'
MSG_NAMES = ('Entity', 'StateChange', 'Observation', 'MemoryUnit', 'ScoredMemory', 'MemoryEvent')


def find_msg_dir() -> Path:
    """Return the directory holding this package's ``.msg`` files.

    Raises:
        BagError: Neither the source tree nor an install prefix has all of them.

    """
    here = Path(__file__).resolve().parent
    # Source checkout first (its msg/ is the truth while editing), then any prefix above
    # the installed module (<prefix>/lib/pythonX.Y/site-packages/brainmem_ros/bags).
    candidates = [here.parents[1] / 'msg']
    candidates += [parent / 'share' / PACKAGE / 'msg' for parent in here.parents]
    candidates.append(Path(sys.prefix) / 'share' / PACKAGE / 'msg')
    for candidate in candidates:
        if all((candidate / f'{name}.msg').is_file() for name in MSG_NAMES):
            return candidate
    msg = f'cannot find the {PACKAGE} .msg files (looked in {", ".join(map(str, candidates))})'
    raise BagError(msg)


def load_typestore(*, msg_dir: Path | None = None) -> Typestore:
    """Return the ROS 2 Jazzy typestore extended with ``brainmem_ros/msg/*`` types.

    Args:
        msg_dir: Where the ``.msg`` files are; None: :func:`find_msg_dir`.

    Returns:
        A typestore shared by all callers with the same ``msg_dir``: do not register
        other types into it (build your own with ``rosbags.typesys`` for that).

    Raises:
        BagError: A ``.msg`` file is missing or does not parse.

    """
    return _build(msg_dir or find_msg_dir())


def deserialize(message: BagMessage, *, typestore: Typestore | None = None) -> object:
    """Deserialize the CDR payload of ``message`` into a rosbags message object.

    Args:
        message: A message from :func:`brainmem_ros.bags.read_bag`.
        typestore: Types to use; None: :func:`load_typestore`.

    Raises:
        BagError: The type is unknown to the typestore or the payload is damaged.

    """
    store = typestore or load_typestore()
    if message.msgtype not in store.fielddefs:
        msg = f'unknown message type {message.msgtype} on topic {message.topic}'
        raise BagError(msg)
    try:
        return store.deserialize_cdr(message.rawdata, message.msgtype)
    except SerdeError as err:
        msg = (
            f'damaged {message.msgtype} message on {message.topic} '
            f'at {message.timestamp_ns}: {err}'
        )
        raise BagError(msg) from None


@cache
def _build(msg_dir: Path) -> Typestore:
    store = get_typestore(Stores.ROS2_JAZZY)
    types = {}
    for name in MSG_NAMES:
        path = msg_dir / f'{name}.msg'
        try:
            text = path.read_text(encoding='utf-8')
            types.update(get_types_from_msg(text, f'{PACKAGE}/msg/{name}'))
        except (OSError, TypesysError) as err:
            msg = f'cannot load message definition {path}: {err}'
            raise BagError(msg) from None
    store.register(types)
    return store
