"""Errors raised while reading or writing rosbag2 bags."""

from __future__ import annotations

from brainmem_ros.errors import BrainMemError


class BagError(BrainMemError):
    """A bag is missing, of an unknown or unsupported storage, or damaged."""
