"""What a robot shares: pure rules over a unit and the fleet configuration."""

from __future__ import annotations

from brainmem_ros.fleet.config import FleetConfig
from brainmem_ros.memory.types import MemoryUnit, UnitType


def share_reason(unit: MemoryUnit, config: FleetConfig, *, explicit: bool = False) -> str:
    """Why ``unit`` is shared with the fleet, or '' when it stays private.

    >>> from brainmem_ros.memory.types import MemoryUnit
    >>> cfg = FleetConfig(share_min_importance=8)
    >>> share_reason(MemoryUnit(id=1, stamp=0, text='lift broken', importance=9), cfg)
    'importance 9.0 >= 8.0'
    >>> share_reason(MemoryUnit(id=2, stamp=0, text='sat down', importance=3), cfg)
    ''
    """
    if explicit:
        return 'marked shared'
    if config.share_reflections and unit.type is UnitType.REFLECTION:
        return 'reflection'
    if config.share_state_changes and unit.state_changes:
        return 'state change'
    if config.share_min_importance > 0 and unit.importance >= config.share_min_importance:
        return f'importance {unit.importance:.1f} >= {config.share_min_importance:.1f}'
    if config.share_min_strength > 0 and unit.strength >= config.share_min_strength:
        return f'strength {unit.strength:.2f} >= {config.share_min_strength:.2f}'
    if unit.type.value in config.share_types:
        return f'type {unit.type.value}'
    if unit.episode_id and unit.episode_id in config.share_episodes:
        return f'episode {unit.episode_id}'
    return ''
