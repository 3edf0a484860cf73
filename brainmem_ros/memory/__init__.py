"""ROS-free memory core: ``from brainmem_ros.memory import BrainMem``."""

from brainmem_ros.memory.brainmem import BrainMem
from brainmem_ros.memory.config import MemoryConfig
from brainmem_ros.memory.types import (
    Edge,
    EdgeKind,
    Entity,
    MemoryEvent,
    MemoryUnit,
    Pose,
    ScoredMemory,
    ScoreParts,
    UnitType,
)

__all__ = [
    'BrainMem', 'Edge', 'EdgeKind', 'Entity', 'MemoryConfig', 'MemoryEvent', 'MemoryUnit', 'Pose',
    'ScoreParts', 'ScoredMemory', 'UnitType',
]
