"""Every node parameter, declared once with a descriptor, loaded into typed config."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.node import Node

from brainmem_ros.errors import ConfigError
from brainmem_ros.fleet.config import FleetConfig
from brainmem_ros.fleet.config import describe as describe_fleet
from brainmem_ros.memory.config import MemoryConfig, describe
from brainmem_ros.ros.param_overrides import check_overrides

# Options that may change while the node runs (validated by the on-set callback).
RUNTIME_SECTIONS = ('retrieval.', 'dynamics.')


@dataclass(frozen=True)
class NodeConfig:
    """Node-level (transport) options; memory options live in MemoryConfig."""

    data_dir: str = field(default='~/.ros/brainmem', metadata={
        'description': 'directory of this robot\'s memory (SQLite + FAISS); created 0700'})
    autostart: bool = field(default=True, metadata={
        'description': 'configure and activate at start-up (no lifecycle manager needed)'})
    observation_topic: str = field(default='observations', metadata={
        'description': 'brainmem_ros/Observation input topic (relative: under the namespace)'})
    shared_observation_topic: str = field(default='observations/shared', metadata={
        'description': 'brainmem_ros/Observation topic whose messages are stored and shared with the '
                       'fleet (fleet tier on; "" = none)'})
    text_topics: tuple[str, ...] = field(default=(), metadata={
        'description': 'std_msgs/String topics whose messages become observations (source = topic)'})
    pose_topic: str = field(default='', metadata={
        'description': 'pose attached to observations without one ("" = none), e.g. amcl_pose'})
    pose_type: str = field(default='PoseWithCovarianceStamped', metadata={
        'description': 'PoseStamped or PoseWithCovarianceStamped'})
    pose_history_s: float = field(default=30.0, metadata={
        'description': 'poses kept to attach the one nearest an observation\'s stamp (0 = the latest '
                       'pose, whatever the stamp)', 'range': (0.0, 3600.0)})
    episode_topic: str = field(default='episode', metadata={
        'description': 'std_msgs/String topic that sets the current episode id'})
    goal_topic: str = field(default='goal', metadata={
        'description': 'std_msgs/String topic that sets the current goal'})
    episode_id: str = field(default='', metadata={'description': 'initial episode id'})
    events_topic: str = field(default='memory_events', metadata={
        'description': 'brainmem_ros/MemoryEvent output topic'})
    markers_topic: str = field(default='memory_markers', metadata={
        'description': 'visualization_msgs/MarkerArray of memories at their poses'})
    markers_period_s: float = field(default=2.0, metadata={
        'description': 'marker republish period (0 = only on change)', 'range': (0.0, 3600.0)})
    max_markers: int = field(default=500, metadata={
        'description': 'most recent memories drawn as markers', 'range': (0, 100000)})
    fact_markers: bool = field(default=False, metadata={
        'description': 'also draw a text marker per object at its last known pose (position facts)'})
    consolidate_period_s: float = field(default=0.0, metadata={
        'description': 'consolidation timer period (0 = only on request)', 'range': (0.0, 1e7)})
    qos_depth: int = field(default=1000, metadata={
        'description': 'DDS queue depth of input subscriptions (drops are logged)', 'range': (1, 100000)})
    ingest_queue_size: int = field(default=10000, metadata={
        'description': 'observations waiting to be stored; when full, new ones are dropped and logged',
        'range': (1, 10000000)})
    ingest_batch_size: int = field(default=64, metadata={
        'description': 'observations stored per transaction (one fsync per batch)', 'range': (1, 10000)})
    qos_reliable: bool = field(default=True, metadata={
        'description': 'reliable (true) or best-effort (false) input subscriptions'})
    qos_keep_all: bool = field(default=True, metadata={
        'description': 'reliable input keeps every sample until taken (true: a slow node slows the '
                       'publisher instead of losing data) or the last qos_depth (false)'})
    stamp_future_tolerance_s: float = field(default=60.0, metadata={
        'description': 'observations stamped further ahead of the node clock are refused',
        'range': (0.0, 1e9)})
    max_stamp_age_s: float = field(default=315576000.0, metadata={
        'description': 'observations stamped longer before the node clock are refused (0 = no limit; '
                       'default 10 years)', 'range': (0.0, 1e10)})
    gil_switch_ms: float = field(default=0.5, metadata={
        'description': "Python thread switch interval for this process (ms; Python's default is 5)",
        'range': (0.05, 100.0)})
    gc_gen0_threshold: int = field(default=20000, metadata={
        'description': 'allocations between young-generation GC passes; objects alive once the store '
                       "is open are frozen out of GC (0 = leave Python's GC as it is)",
        'range': (0, 10000000)})


def _descriptor(name: str, description: str, bound: tuple[float, float] | None,
                value: Any, *, read_only: bool) -> ParameterDescriptor:
    d = ParameterDescriptor(name=name, description=description, read_only=read_only)
    if bound is not None and not isinstance(value, bool):
        if isinstance(value, int):
            d.integer_range = [IntegerRange(from_value=int(bound[0]), to_value=int(bound[1]), step=0)]
        elif isinstance(value, float):
            d.floating_point_range = [FloatingPointRange(from_value=float(bound[0]),
                                                         to_value=float(bound[1]), step=0.0)]
    return d


def parameter_names() -> list[str]:
    """Every parameter the node declares (launch-file checks use this)."""
    return ([f.name for f in fields(NodeConfig)] + [f'memory.{k}' for k in describe()]
            + [f'fleet.{k}' for k in describe_fleet()])


def declare(node: Node, *, args: Sequence[str] | None = None) -> None:
    """Declare all parameters with descriptors (ranges are enforced by rclpy too).

    ``args`` is the command line the node's context was initialised with (default
    ``sys.argv``, as for ``rclpy.init()``); a ``-p`` override in it of the wrong type
    raises ``InvalidParameterTypeException``, with a params file or without.
    """
    defaults = NodeConfig()
    for f in fields(NodeConfig):
        value = getattr(defaults, f.name)
        if isinstance(value, tuple):
            node.declare_parameter(f.name, list(value) or [''], ParameterDescriptor(
                name=f.name, description=f.metadata['description'],
                type=ParameterType.PARAMETER_STRING_ARRAY, read_only=True))
            continue
        node.declare_parameter(f.name, value, _descriptor(
            f.name, f.metadata['description'], f.metadata.get('range'), value, read_only=True))
    for key, (value, description, bound) in describe().items():
        name = f'memory.{key}'
        node.declare_parameter(name, value, _descriptor(
            name, description, (bound.low, bound.high) if bound else None, value,
            read_only=not key.startswith(RUNTIME_SECTIONS)))
    for key, (value, description, fleet_bound) in describe_fleet().items():
        name = f'fleet.{key}'
        if isinstance(value, tuple):
            node.declare_parameter(name, list(value) or [''], ParameterDescriptor(
                name=name, description=description, type=ParameterType.PARAMETER_STRING_ARRAY,
                read_only=True))
            continue
        node.declare_parameter(name, value, _descriptor(name, description, fleet_bound, value,
                                                        read_only=True))
    for warning in check_overrides(node, sys.argv if args is None else args):
        node.get_logger().warning(warning)


def load_fleet(node: Node) -> FleetConfig:
    """The fleet tier's parameters (``fleet.*``), validated; off unless fleet.enabled."""
    return FleetConfig.from_mapping({k: node.get_parameter(f'fleet.{k}').value for k in describe_fleet()})


def load(node: Node) -> tuple[NodeConfig, MemoryConfig]:
    """Read and validate all parameters; ConfigError names the first bad one."""
    values: dict[str, Any] = {}
    for f in fields(NodeConfig):
        value = node.get_parameter(f.name).value
        if f.name == 'text_topics':
            value = tuple(t for t in (value or []) if t)
        values[f.name] = value
    cfg = NodeConfig(**values)
    if cfg.pose_type not in ('PoseStamped', 'PoseWithCovarianceStamped'):
        msg = f'pose_type={cfg.pose_type!r} must be PoseStamped or PoseWithCovarianceStamped'
        raise ConfigError(msg)
    if not cfg.data_dir.strip():
        msg = 'data_dir is empty'
        raise ConfigError(msg)
    memory = MemoryConfig.from_mapping(
        {k: node.get_parameter(f'memory.{k}').value for k in describe()})
    check_memory(memory)
    return cfg, memory


def check_memory(memory: MemoryConfig) -> None:
    """Checks over several options at once (each one alone is range-checked already)."""
    r = memory.retrieval
    if r.default_top_k > r.max_top_k:
        msg = (f'memory.retrieval.default_top_k ({r.default_top_k}) is larger than '
               f'memory.retrieval.max_top_k ({r.max_top_k}): every Retrieve without top_k would fail')
        raise ConfigError(msg)
