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
    # The encoders import the value types of memory/types.py (which runs this file) and
    # BrainMem imports the encoders: importing BrainMem here at once would make
    # `import brainmem_ros.encoders.base`, run first, import itself back half-initialised.
    # Moving the value types out of this package would end the need for this.
    if name == 'BrainMem':
        from brainmem_ros.memory.brainmem import BrainMem

        return BrainMem
    msg = f'module {__name__!r} has no attribute {name!r}'
    raise AttributeError(msg)
