"""ROS-free rosbag2 reading and writing (sqlite3 and mcap storage), built on rosbags and mcap.

Nothing here imports ``rclpy`` or the generated message classes: bags are replayed and
demo episodes written on machines without ROS.
"""

from __future__ import annotations

from brainmem_ros.bags.errors import BagError
from brainmem_ros.bags.reader import BagMessage, TopicInfo, list_topics, read_bag
from brainmem_ros.bags.typestore import deserialize, load_typestore

__all__ = [
    'BagError',
    'BagMessage',
    'TopicInfo',
    'deserialize',
    'list_topics',
    'load_typestore',
    'read_bag',
]
