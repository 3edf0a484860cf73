"""RViz markers of memories at their poses."""

from __future__ import annotations

import time
from collections.abc import Sequence

from builtin_interfaces.msg import Duration
from visualization_msgs.msg import Marker, MarkerArray

from brainmem_ros.memory.facts import Fact
from brainmem_ros.memory.types import MemoryUnit
from brainmem_ros.ros.convert import to_time


def valence_colour(valence: float) -> tuple[float, float, float]:
    """Green for good outcomes, red for bad ones, grey in between."""
    v = max(-1.0, min(1.0, valence))
    if v >= 0:
        return 0.6 - 0.5 * v, 0.6 + 0.4 * v, 0.6 - 0.5 * v
    return 0.6 - 0.4 * v, 0.6 + 0.5 * v, 0.6 + 0.5 * v


def memory_markers(units: Sequence[MemoryUnit], *, stamp: float) -> MarkerArray:
    """A sphere per memory (colour = valence, size = strength) and a short text label."""
    array = MarkerArray()
    clear = Marker(action=Marker.DELETEALL, ns='brainmem')
    array.markers.append(clear)
    for unit in units:
        if unit.pose is None:
            continue
        r, g, b = valence_colour(unit.valence)
        size = 0.08 + 0.12 * max(0.0, min(2.0, unit.strength))
        sphere = Marker(ns='brainmem', id=unit.id * 2, type=Marker.SPHERE, action=Marker.ADD)
        sphere.header.frame_id = unit.pose.frame
        sphere.header.stamp = to_time(stamp)
        sphere.pose.position.x, sphere.pose.position.y = unit.pose.x, unit.pose.y
        sphere.pose.position.z = unit.pose.z + 0.1
        sphere.pose.orientation.w = 1.0
        sphere.scale.x = sphere.scale.y = sphere.scale.z = size
        sphere.color.r, sphere.color.g, sphere.color.b = r, g, b
        sphere.color.a = 0.35 if unit.marginalized else 0.9
        sphere.lifetime = Duration()
        label = Marker(ns='brainmem_text', id=unit.id * 2 + 1, type=Marker.TEXT_VIEW_FACING,
                       action=Marker.ADD)
        label.header = sphere.header
        label.pose.position.x, label.pose.position.y = unit.pose.x, unit.pose.y
        label.pose.position.z = unit.pose.z + 0.25 + size
        label.pose.orientation.w = 1.0
        label.scale.z = 0.08
        label.color.r = label.color.g = label.color.b = label.color.a = 1.0
        label.text = f'#{unit.id} {unit.text[:40]}'
        array.markers.extend([sphere, label])
    return array


def fact_markers(facts: Sequence[Fact], *, stamp: float) -> MarkerArray:
    """A text marker per object at its last known pose: "name (seen HH:MM)", in its frame."""
    array = MarkerArray()
    array.markers.append(Marker(action=Marker.DELETEALL, ns='brainmem_facts'))
    for fact in facts:
        if fact.pose is None:
            continue
        label = Marker(ns='brainmem_facts', id=fact.id, type=Marker.TEXT_VIEW_FACING, action=Marker.ADD)
        label.header.frame_id = fact.pose.frame
        label.header.stamp = to_time(stamp)
        label.pose.position.x, label.pose.position.y = fact.pose.x, fact.pose.y
        label.pose.position.z = fact.pose.z + 0.3
        label.pose.orientation.w = 1.0
        label.scale.z = 0.12
        label.color.r, label.color.g, label.color.b, label.color.a = 1.0, 0.85, 0.3, 1.0
        seen = time.strftime('%H:%M', time.localtime(fact.last_seen))
        label.text = f'{fact.entity[:40]} (seen {seen})'
        label.lifetime = Duration()
        array.markers.append(label)
    return array
