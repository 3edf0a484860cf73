"""ROS-free memory core: ``from brainmem_ros.memory import BrainMem``."""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from brainmem_ros.memory.brainmem import BrainMem

__all__ = [
    'BrainMem', 'Edge', 'EdgeKind', 'Entity', 'MemoryConfig', 'MemoryEvent', 'MemoryUnit', 'Pose',
    'ScoreParts', 'ScoredMemory', 'UnitType',
]


def __getattr__(name: str) -> Any:
    # BrainMem imports the encoders, whose protocols import these types: load it lazily
    # so that `brainmem_ros.encoders.base` can be imported first without a cycle.
    if name == 'BrainMem':
        from brainmem_ros.memory.brainmem import BrainMem

        return BrainMem
    msg = f'module {__name__!r} has no attribute {name!r}'
    raise AttributeError(msg)
