"""``brainmem_node``: the memory as a managed ROS 2 node.

A thin layer: it converts messages, calls :class:`BrainMem`, and publishes what
changed. Lifecycle (the ros2/demos ``lifecycle_py`` pattern): configure loads the
models, opens the store and creates every publisher (lifecycle publishers),
subscription, service and timer; activate enables them; deactivate disables them,
and meanwhile every request is answered ``success=false`` ("inactive") and topic
input is counted and ignored; cleanup destroys them and closes the store; shutdown
parks pending enrichment. A transition that is not possible from the current state
is refused (``success=false``), never fatal. With ``autostart`` (default) the node
walks itself to active, so ``ros2 run`` works without a lifecycle manager.

One clock: stamps of unstamped observations, recency, access times and
consolidation all read the node's ROS clock (sim time with ``use_sim_time``).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import rclpy
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped
from lifecycle_msgs.srv import ChangeState
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.exceptions import InvalidHandle, ParameterException
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from brainmem_ros.errors import (
    BrainMemError,
    ConfigError,
    InvalidInputError,
    ModelError,
    SchemaVersionError,
    StoreError,
    UnknownIdError,
)
from brainmem_ros.memory.brainmem import BrainMem, check_text
from brainmem_ros.memory.config import MemoryConfig
from brainmem_ros.memory.types import MemoryEvent, ObservationInput, Pose
from brainmem_ros.msg import MemoryEvent as MemoryEventMsg
from brainmem_ros.msg import Observation
from brainmem_ros.ros import convert, params, rosout
from brainmem_ros.ros.ingest import IngestWorker
from brainmem_ros.ros.markers import fact_markers, memory_markers
from brainmem_ros.ros.spin import spin
from brainmem_ros.srv import Consolidate, Forget, Reinforce, Retrieve, SetContext, StateOf, Stats, Store
from brainmem_ros.tuning import tune_interpreter

R = TypeVar('R')
EXECUTOR_THREADS = 16
EPISODE_MAX_BYTES = 256  # what Store accepts as an episode id


class BrainMemNode(LifecycleNode):
    """Serves Store / Retrieve / Reinforce / Consolidate / Forget / Stats / SetContext / StateOf."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('brainmem', **kwargs)
        self._log_handler = rosout.attach(self.get_logger())
        params.declare(self)
        self.mem: BrainMem | None = None
        self.cfg: params.NodeConfig | None = None
        self.configure_error = ''
        self.episode_id = ''
        self.goal = ''
        self._active = False
        self._ignored_inactive = 0
        self._lost_dds = 0
        self._stamps = convert.StampPolicy()
        self._latest_pose: Pose | None = None
        self._markers_dirty = threading.Event()
        self._handles: list[Any] = []
        self._events_pub: Any = None
        self._markers_pub: Any = None
        # All groups are reentrant: BrainMem serialises its own writes, and rclpy's
        # MultiThreadedExecutor busy-spins (holding the GIL) on ready entities of a
        # busy mutually exclusive group, which starved the workers under load (measured:
        # 58% of the node's samples in Future.done). Topic callbacks only enqueue.
        # See also EXECUTOR_THREADS.
        self._ingest_group = ReentrantCallbackGroup()
        self._store_group = ReentrantCallbackGroup()
        self._query_group = ReentrantCallbackGroup()
        self._ingest: IngestWorker | None = None
        self._fleet: Any = None  # brainmem_ros.fleet.sync.FleetSync when fleet.enabled
        self._admin_group = ReentrantCallbackGroup()
        self.add_on_set_parameters_callback(self.parameters_callback)
        change_state = getattr(self, '_service_change_state', None)
        if change_state is not None:
            # rclpy's own handler raises RCLError (and the executor ends the process)
            # for a transition the current state does not have.
            self._rclpy_change_state = change_state.callback
            change_state.callback = self.change_state_callback

    def destroy_node(self) -> None:
        """Destroy the node; the core's logging goes back to Python's root logger."""
        rosout.detach(self._log_handler)
        super().destroy_node()

    # -- lifecycle -------------------------------------------------------------------

    def change_state_callback(self, request: ChangeState.Request, response: ChangeState.Response
                              ) -> ChangeState.Response:
        """ChangeState service: a transition the current state has not is refused, not fatal."""
        state = self._state_machine.current_state[1]
        available = self._state_machine.available_transitions  # (id, label, start, ..., goal)
        wanted = request.transition
        ok = any(t[1] == wanted.label if wanted.label else t[0] == wanted.id for t in available)
        if not ok:
            name = wanted.label or f'id {wanted.id}'
            possible = ', '.join(sorted({t[1] for t in available})) or 'none'
            self.get_logger().warning(f'transition {name} refused: not possible from state {state} '
                                      f'(possible: {possible})')
            response.success = False
            return response
        try:
            result: ChangeState.Response = self._rclpy_change_state(request, response)
        except _rclpy.RCLError as exc:  # a concurrent transition changed the state meanwhile
            self.get_logger().warning(f'transition {wanted.label or wanted.id} refused: {exc}')
            response.success = False
            return response
        return result

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Validate parameters, load the models, open the store, create every endpoint."""
        self.configure_error = ''
        try:
            self._configure()
        except Exception as exc:  # every cause is reported, in one line, with a remedy
            self.configure_error = self._configure_reason(exc)
            self.get_logger().error(f'configure failed: {self.configure_error}')
            logging.getLogger(__name__).debug('configure failed', exc_info=True)
            self._teardown()
            return TransitionCallbackReturn.FAILURE
        return TransitionCallbackReturn.SUCCESS

    def _configure(self) -> None:
        self.cfg, memory_cfg = params.load(self)
        cfg = self.cfg
        self._stamps = convert.StampPolicy(future_s=cfg.stamp_future_tolerance_s,
                                           max_age_s=cfg.max_stamp_age_s)
        data_dir = Path(os.path.expanduser(cfg.data_dir))
        if data_dir.exists() and not data_dir.is_dir():
            msg = f'data_dir {data_dir} is a file, not a directory: point data_dir at a directory'
            raise ConfigError(msg)
        llm_extractor, reasoner = self._llm(memory_cfg)
        self.mem = BrainMem.open(data_dir, memory_cfg, llm_extractor=llm_extractor,
                                 reasoner=reasoner, on_event=self._event_callback, clock=self.now)
        fleet_cfg = params.load_fleet(self)
        if fleet_cfg.enabled:  # psycopg is imported only by robots that use the fleet tier
            from brainmem_ros.fleet.sync import FleetSync

            self._fleet = FleetSync(fleet_cfg)
            self._fleet.attach(self.mem)
        stats = self.mem.stats()
        tune_interpreter(switch_ms=cfg.gil_switch_ms, gc_gen0=cfg.gc_gen0_threshold)
        self.episode_id = cfg.episode_id
        self._ingest = IngestWorker(self.mem, maxsize=cfg.ingest_queue_size,
                                    batch_size=cfg.ingest_batch_size, warn=self._ingest_warning)
        self._create_endpoints(cfg)
        self.get_logger().info(
            f'memory at {data_dir}: {stats.units} units ({stats.active_units} active), '
            f'index {stats.index_kind}: {self.mem.index_status}')

    def _configure_reason(self, exc: Exception) -> str:
        data_dir = self.cfg.data_dir if self.cfg is not None else '?'
        text = str(exc) or type(exc).__name__
        if isinstance(exc, ConfigError | ModelError | SchemaVersionError):  # they say what to do
            return text
        if isinstance(exc, PermissionError):
            return f'{text}: give this user write access to data_dir ({data_dir}) or choose another one'
        if isinstance(exc, NotADirectoryError | FileExistsError):
            return f'{text}: data_dir ({data_dir}) must be a directory (it is created if missing)'
        if isinstance(exc, StoreError | sqlite3.DatabaseError):
            return (f'the memory store in {data_dir} cannot be read ({text}): it may be damaged; '
                    'move memory.db aside (or restore a backup) and start again')
        if isinstance(exc, OSError):
            return f'{text} (data_dir {data_dir})'
        return f'{type(exc).__name__}: {text}'

    def _llm(self, cfg: MemoryConfig) -> tuple[Any, Any]:
        if not cfg.encoder.llm_enabled:
            return None, None
        from brainmem_ros.encoders.llama import LlamaExtractor, LlamaReasoner, UnavailableLlm
        from brainmem_ros.encoders.models import default_model_paths

        paths = default_model_paths(Path(cfg.encoder.model_dir) if cfg.encoder.model_dir else None)
        model = Path(cfg.encoder.llm_model) if cfg.encoder.llm_model else paths.llm
        try:
            extractor = LlamaExtractor(model, n_threads=cfg.encoder.llm_threads,
                                       timeout_s=cfg.encoder.llm_timeout_s)
        except ModelError as exc:
            # Memory without enrichment beats no memory: the fast path runs, units are
            # marked failed with the reason and retried on the next start.
            self.get_logger().error(f'LLM unavailable, enrichment will fail and be retried: {exc}')
            return UnavailableLlm(str(exc)), None
        return extractor, LlamaReasoner(extractor)

    def _create_endpoints(self, cfg: params.NodeConfig) -> None:
        # Bursts: a keep-all reliable reader never overwrites a sample it has not
        # taken, so a node that falls behind slows the publisher (DDS flow control)
        # instead of losing observations without a word (keep-last did: 2,318 of 3,000
        # at 500 Hz). qos_depth still bounds what the reader holds.
        qos = QoSProfile(depth=cfg.qos_depth,
                         history=HistoryPolicy.KEEP_ALL if cfg.qos_keep_all else HistoryPolicy.KEEP_LAST,
                         reliability=ReliabilityPolicy.RELIABLE if cfg.qos_reliable
                         else ReliabilityPolicy.BEST_EFFORT)
        self._events_pub = self.create_lifecycle_publisher(MemoryEventMsg, cfg.events_topic, 50)
        self._markers_pub = self.create_lifecycle_publisher(MarkerArray, cfg.markers_topic, 1)
        h = self._handles
        g_in, g_q, g_a = self._ingest_group, self._query_group, self._admin_group
        lost = SubscriptionEventCallbacks(message_lost=self.message_lost_callback)
        h.append(self.create_subscription(Observation, cfg.observation_topic, self.observation_callback,
                                          qos, callback_group=g_in, event_callbacks=lost))
        for topic in cfg.text_topics:
            h.append(self.create_subscription(String, topic, self._text_callback_for(topic), qos,
                                              callback_group=g_in, event_callbacks=lost))
        if cfg.pose_topic:
            pose_cls = PoseStamped if cfg.pose_type == 'PoseStamped' else PoseWithCovarianceStamped
            h.append(self.create_subscription(pose_cls, cfg.pose_topic, self.pose_callback, 10,
                                              callback_group=g_in))
        h.append(self.create_subscription(String, cfg.episode_topic, self.episode_callback, 10,
                                          callback_group=g_a))
        h.append(self.create_subscription(String, cfg.goal_topic, self.goal_callback, 10,
                                          callback_group=g_a))
        h.append(self.create_service(Store, 'store', self.store_callback,
                                     callback_group=self._store_group))
        h.append(self.create_service(Retrieve, 'retrieve', self.retrieve_callback, callback_group=g_q))
        h.append(self.create_service(Stats, 'stats', self.stats_callback, callback_group=g_q))
        h.append(self.create_service(Reinforce, 'reinforce', self.reinforce_callback, callback_group=g_a))
        h.append(self.create_service(Consolidate, 'consolidate', self.consolidate_callback,
                                     callback_group=g_a))
        h.append(self.create_service(Forget, 'forget', self.forget_callback, callback_group=g_a))
        h.append(self.create_service(SetContext, 'set_context', self.set_context_callback,
                                     callback_group=g_a))
        h.append(self.create_service(StateOf, 'state_of', self.state_of_callback, callback_group=g_q))
        h.append(self.create_timer(cfg.markers_period_s if cfg.markers_period_s > 0 else 0.5,
                                   self.markers_callback, callback_group=g_a))
        if cfg.consolidate_period_s > 0:
            h.append(self.create_timer(cfg.consolidate_period_s, self.consolidate_timer_callback,
                                       callback_group=g_a))

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Enable publishers; topics and services start serving."""
        result = super().on_activate(state)
        if result != TransitionCallbackReturn.SUCCESS:
            return result
        self._active = True
        self._markers_dirty.set()
        self.get_logger().info('active: serving store, retrieve, reinforce, consolidate, forget, '
                               'stats, set_context')
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Disable publishers; requests are answered "inactive" (the store stays open)."""
        self._active = False
        return super().on_deactivate(state)

    def _destroy(self, handle: Any) -> None:
        kind = type(handle).__name__
        destroy: Callable[[Any], Any] = {  # type: ignore[assignment]
            'Subscription': self.destroy_subscription, 'Service': self.destroy_service,
            'Timer': self.destroy_timer}[kind]
        destroy(handle)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Destroy the endpoints, close the store (saves the index, parks pending enrichment)."""
        self._teardown()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Flush and close whatever state the node is in."""
        self._teardown()
        return TransitionCallbackReturn.SUCCESS

    def release(self) -> None:
        """Stop serving and close the store, whatever the lifecycle state (process exit)."""
        self._teardown()

    def _teardown(self) -> None:
        self._active = False
        for handle in self._handles:
            self._destroy(handle)
        self._handles.clear()
        for pub in (self._events_pub, self._markers_pub):
            if pub is not None:
                self.destroy_lifecycle_publisher(pub)
        self._events_pub = self._markers_pub = None
        if self._ingest is not None:
            self._ingest.close()  # everything already received is stored before the store closes
            self._ingest = None
        if self._fleet is not None:
            self._fleet.close()
            self._fleet = None
        if self.mem is not None:
            self.mem.close()
            self.mem = None

    def now(self) -> float:
        """The node's clock in POSIX seconds (sim time with use_sim_time): the memory's clock."""
        ns = self.get_clock().now().nanoseconds
        if ns <= 0:
            msg = 'the node clock has no time yet: use_sim_time is true and nothing was published on /clock'
            raise BrainMemError(msg)
        return ns / 1e9

    # -- parameters ------------------------------------------------------------------

    def parameters_callback(self, changes: list[Parameter]) -> SetParametersResult:
        """Validate run-time changes of retrieval/dynamics options and apply them."""
        updates = {p.name.removeprefix('memory.'): p.value for p in changes
                   if p.name.startswith('memory.')}
        if not updates or self.mem is None:
            return SetParametersResult(successful=True)
        try:
            new = MemoryConfig.from_mapping(updates, base=self.mem.config)
            params.check_memory(new)
        except BrainMemError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        self.mem.reconfigure(new)
        return SetParametersResult(successful=True)

    # -- inputs ----------------------------------------------------------------------

    def _memory(self) -> BrainMem:
        if self.mem is None:
            msg = 'memory is not configured (node inactive)'
            raise BrainMemError(msg)
        return self.mem

    def _ingest_warning(self, text: str) -> None:
        self.get_logger().warning(text, throttle_duration_sec=2.0)

    def _accepting(self) -> bool:
        if self._active and self._ingest is not None:
            return True
        self._ignored_inactive += 1
        self.get_logger().warning(f'topic input ignored while the node is inactive '
                                  f'({self._ignored_inactive} so far)', throttle_duration_sec=5.0)
        return False

    def _refused(self, exc: BrainMemError) -> None:
        if self._ingest is not None:
            self._ingest.counters.refused += 1
        self._ingest_warning(f'observation not stored: {exc}')

    def observation_callback(self, msg: Observation) -> None:
        """Queue an Observation message for storing."""
        if not self._accepting():
            return
        try:
            kwargs = convert.observation_kwargs(msg, episode_id=self.episode_id,
                                                latest_pose=self._latest_pose, now=self.now(),
                                                stamps=self._stamps)
        except BrainMemError as exc:
            self._refused(exc)
            return
        if self._ingest is not None:
            self._ingest.put(ObservationInput(text=msg.text, **kwargs))

    def _text_callback_for(self, topic: str) -> Callable[[String], None]:
        return lambda msg: self.text_callback(msg, topic)

    def text_callback(self, msg: String, topic: str) -> None:
        """Queue a plain-text caption from one of ``text_topics``."""
        if not self._accepting():
            return
        try:
            now = self.now()
        except BrainMemError as exc:
            self._refused(exc)
            return
        if self._ingest is not None:
            self._ingest.put(ObservationInput(text=msg.data, stamp=now, source=topic,
                                              episode_id=self.episode_id, pose=self._latest_pose))

    def message_lost_callback(self, event: Any) -> None:
        """DDS dropped input messages (best effort, or a reader queue overrun): count, say so."""
        self._lost_dds += int(event.total_count_change)  # summed over every input subscription
        self._ingest_warning(f'{event.total_count_change} input message(s) lost by DDS '
                             f'({event.total_count} in all): raise qos_depth')

    def pose_callback(self, msg: PoseStamped | PoseWithCovarianceStamped) -> None:
        """Remember the latest robot pose (attached to observations that carry none)."""
        pose = msg.pose.pose if isinstance(msg, PoseWithCovarianceStamped) else msg.pose
        try:
            self._latest_pose = convert.pose_from_msg(pose, msg.header.frame_id)
        except BrainMemError as exc:
            self.get_logger().warning(f'pose ignored: {exc}', throttle_duration_sec=5.0)

    def _episode(self, text: str) -> str:
        return check_text(text, 'episode_id', max_bytes=EPISODE_MAX_BYTES, required=False)

    def _goal(self, text: str) -> str:
        return check_text(text, 'goal', max_bytes=self._memory().config.store.max_text_bytes,
                          required=False)

    def episode_callback(self, msg: String) -> None:
        """Set the current episode (refused, with a warning, if Store would refuse it)."""
        try:
            self.episode_id = self._episode(msg.data)
        except BrainMemError as exc:
            self.get_logger().warning(f'episode ignored: {exc}', throttle_duration_sec=5.0)

    def goal_callback(self, msg: String) -> None:
        """Set the current goal (refused, with a warning, if Retrieve would refuse it)."""
        try:
            self.goal = self._goal(msg.data)
        except BrainMemError as exc:
            self.get_logger().warning(f'goal ignored: {exc}', throttle_duration_sec=5.0)

    # -- services --------------------------------------------------------------------

    def _serve(self, response: R, fn: Callable[[BrainMem, R], None]) -> R:
        # Every request gets an answer: domain errors name the problem, anything
        # else is logged with its traceback and reported as an internal error.
        try:
            if not self._active:
                msg = 'node inactive: activate it (lifecycle) to serve requests'
                raise BrainMemError(msg)
            fn(self._memory(), response)
            response.success = True  # type: ignore[attr-defined]
        except BrainMemError as exc:
            response.success = False  # type: ignore[attr-defined]
            response.message = str(exc)  # type: ignore[attr-defined]
        except Exception as exc:
            logging.getLogger(__name__).exception('service failed')
            response.success = False  # type: ignore[attr-defined]
            response.message = f'internal error: {type(exc).__name__}: {exc}'  # type: ignore[attr-defined]
        return response

    def store_callback(self, request: Store.Request, response: Store.Response) -> Store.Response:
        """Store one observation."""
        def run(mem: BrainMem, resp: Store.Response) -> None:
            kwargs = convert.observation_kwargs(request.observation, episode_id=self.episode_id,
                                                latest_pose=self._latest_pose, now=self.now(),
                                                stamps=self._stamps)
            result = mem.store_ex(request.observation.text, **kwargs)
            resp.id = result.unit.id
            resp.unit = convert.unit_to_msg(result.unit)
            resp.message = result.message
            if request.share:
                shared = self._fleet is not None and self._fleet.share([result.unit.id]) == 1
                resp.message += '; shared with the fleet' if shared else \
                    '; not shared: fleet tier off or its outbox full'
        return self._serve(response, run)

    def retrieve_callback(self, request: Retrieve.Request, response: Retrieve.Response
                          ) -> Retrieve.Response:
        """Goal-directed retrieval."""
        def run(mem: BrainMem, resp: Retrieve.Response) -> None:
            near = radius = None
            if request.use_pose:
                near = convert.pose_from_msg(request.pose.pose, request.pose.header.frame_id,
                                             orientation=False)
                radius = convert.check_finite('radius', request.radius)
            kwargs: dict[str, Any] = dict(
                goal=request.goal or self.goal, state=request.current_state,
                top_k=request.top_k, episode_id=request.episode_id or None,
                types=list(request.types) or None, since=convert.from_time(request.since),
                until=convert.from_time(request.until), near=near, radius=radius,
                include_marginalized=request.include_marginalized,
                as_of=convert.from_time(request.as_of))
            if request.scope in ('', 'local') or self._fleet is None:
                if request.scope not in ('', 'local', 'fleet'):
                    msg = f"scope must be '', local or fleet, got {request.scope!r}"
                    raise InvalidInputError(msg)
                results = mem.retrieve(request.query, **kwargs)
                resp.memories = [convert.scored_to_msg(r) for r in results]
                resp.robot_ids = [''] * len(results)
                resp.message = f'{len(results)} memories'
                if request.scope == 'fleet':
                    resp.message += '; fleet tier off: local results only'
                return
            recall = self._fleet.retrieve(request.query, scope=request.scope, **kwargs)
            resp.memories = [convert.scored_to_msg(r.memory) for r in recall.results]
            resp.robot_ids = [r.robot_id for r in recall.results]
            resp.fleet_reached = recall.fleet_reached
            resp.message = '; '.join(x for x in (f'{len(recall.results)} memories', recall.note) if x)
        return self._serve(response, run)

    def reinforce_callback(self, request: Reinforce.Request, response: Reinforce.Response
                           ) -> Reinforce.Response:
        """Reward or punish memories the planner used."""
        def run(mem: BrainMem, resp: Reinforce.Response) -> None:
            if request.robot_id and self._fleet is not None and \
                    request.robot_id != self._fleet.config.robot_id:
                queued = self._fleet.reinforce(request.robot_id, [int(i) for i in request.ids],
                                               reward=float(request.reward), note=request.note)
                resp.message = f'{queued} memories of {request.robot_id} reinforced (sent by the outbox)'
                return
            try:
                units = mem.reinforce([int(i) for i in request.ids], reward=float(request.reward),
                                      note=request.note)
            except UnknownIdError as exc:
                resp.unknown_ids = list(exc.ids)
                raise
            resp.units = [convert.unit_to_msg(u) for u in units]
            resp.message = f'reinforced {len(units)} memories by {request.reward:+.2f}'
        return self._serve(response, run)

    def consolidate_callback(self, request: Consolidate.Request, response: Consolidate.Response
                             ) -> Consolidate.Response:
        """Run one consolidation cycle now."""
        def run(mem: BrainMem, resp: Consolidate.Response) -> None:
            report = mem.consolidate()
            resp.decayed = report.decayed
            resp.marginalized = len(report.marginalized)
            resp.pruned_edges = report.pruned_edges
            resp.replayed = len(report.replayed)
            resp.message = (f'decayed {report.decayed}, marginalized {len(report.marginalized)}, '
                            f'pruned {report.pruned_edges} edges, replayed {len(report.replayed)}')
        return self._serve(response, run)

    def consolidate_timer_callback(self) -> None:
        """Periodic consolidation."""
        if not self._active:
            return
        try:
            self._memory().consolidate()
        except BrainMemError as exc:
            self.get_logger().warning(f'consolidation failed: {exc}')

    def forget_callback(self, request: Forget.Request, response: Forget.Response) -> Forget.Response:
        """Marginalize / restore / protect / unprotect / delete (with confirm)."""
        def run(mem: BrainMem, resp: Forget.Response) -> None:
            changed = mem.forget([int(i) for i in request.ids], mode=request.mode,
                                 confirm=request.confirm)
            resp.changed = changed
            resp.message = f'{request.mode}: {len(changed)} memories changed'
        return self._serve(response, run)

    def stats_callback(self, request: Stats.Request, response: Stats.Response) -> Stats.Response:
        """Counts, queue depth, index kind and store size."""
        def run(mem: BrainMem, resp: Stats.Response) -> None:
            s = mem.stats()
            resp.units, resp.active_units = s.units, s.active_units
            resp.marginalized_units, resp.protected_units = s.marginalized_units, s.protected_units
            resp.edges, resp.queue_depth = s.edges, s.queue_depth
            resp.index_kind, resp.store_bytes = s.index_kind, s.store_bytes
            resp.details_json = json.dumps({
                'index_size': s.index_size, 'index_status': s.index_status,
                'graph': ('off' if mem.adjacency is None else
                          'in memory' if mem.adjacency.ready else 'reading (edges from SQLite meanwhile)'),
                'enrichment': s.enrichment, 'episode_id': self.episode_id, 'goal': self.goal,
                'ingest_queue': self._ingest.depth() if self._ingest else 0,
                'ingest': {**(vars(self._ingest.counters) if self._ingest else {}),
                           'lost_dds': self._lost_dds, 'ignored_inactive': self._ignored_inactive},
                'data_dir': str(mem.path),
                'fleet': vars(self._fleet.stats()) if self._fleet is not None else {'enabled': False}})
            resp.message = f'{s.units} memories'
        return self._serve(response, run)

    def state_of_callback(self, request: StateOf.Request, response: StateOf.Response
                          ) -> StateOf.Response:
        """What is (or was, as_of) true of an entity: facts that hold first, then history."""
        def run(mem: BrainMem, resp: StateOf.Response) -> None:
            as_of = convert.from_time(request.as_of)
            facts = mem.state_of(request.entity, attribute=request.attribute or None, as_of=as_of)
            convert.facts_to_response(facts, resp, as_of=as_of)
            held = sum(resp.holds)
            resp.message = f'{len(facts)} facts, {held} holding' if facts else \
                f'no facts known about {request.entity.strip()!r}'
        return self._serve(response, run)

    def set_context_callback(self, request: SetContext.Request, response: SetContext.Response
                             ) -> SetContext.Response:
        """Set the current episode and goal."""
        def run(mem: BrainMem, resp: SetContext.Response) -> None:
            # Checked as Store and Retrieve check them (UTF-8 bytes), or both are refused.
            episode = self._episode(request.episode_id) if request.episode_id else None
            goal = '' if request.clear_goal else self._goal(request.goal) if request.goal else None
            if episode is not None:
                self.episode_id = episode
            if goal is not None:
                self.goal = goal
            resp.episode_id, resp.goal = self.episode_id, self.goal
            resp.message = 'context updated'
        return self._serve(response, run)

    # -- outputs ---------------------------------------------------------------------

    def _event_callback(self, event: MemoryEvent) -> None:
        if self._fleet is not None:
            self._fleet.observe(event)
        self._markers_dirty.set()
        pub = self._events_pub
        if pub is None or not self._active:
            return
        msg = MemoryEventMsg(kind=event.kind, ids=list(event.ids), detail=event.detail[:1000])
        msg.stamp = self.get_clock().now().to_msg()
        try:
            pub.publish(msg)
        except InvalidHandle:
            return  # the publisher was destroyed by a concurrent deactivation

    def markers_callback(self) -> None:
        """Publish markers when something changed, or at the configured period."""
        cfg, pub, mem = self.cfg, self._markers_pub, self.mem
        if cfg is None or pub is None or mem is None or cfg.max_markers == 0 or not self._active:
            return
        if pub.get_subscription_count() == 0:
            # Nobody draws them: building 2 markers per memory costs real CPU (py-spy:
            # a third of a core during a topic burst), which Store and Retrieve need more.
            self._markers_dirty.set()  # so the first subscriber gets a fresh array
            return
        if cfg.markers_period_s <= 0 and not self._markers_dirty.is_set():
            return
        self._markers_dirty.clear()
        try:
            ids = mem.store_db.recent_posed_ids(limit=cfg.max_markers)
            units = list(mem.store_db.get_units(ids).values())
            now = self.get_clock().now().nanoseconds / 1e9
            array = memory_markers(units, stamp=now)
            if cfg.fact_markers:
                places = mem.facts.last_positions(limit=cfg.max_markers)
                array.markers.extend(fact_markers(places, stamp=now).markers)
            pub.publish(array)
        except (BrainMemError, InvalidHandle):
            return  # deactivated or closed while this timer tick was running


def main(args: list[str] | None = None) -> int:
    """Run the node until SIGINT/SIGTERM; everything acknowledged is on disk on exit."""
    logging.basicConfig(level=logging.WARNING)
    rclpy.init(args=args if args is not None else sys.argv)
    try:
        node = BrainMemNode()
    except ParameterException as exc:
        # A wrongly typed or out-of-range -p value or params file entry: name it, no traceback.
        rclpy.logging.get_logger('brainmem').fatal(f'invalid parameter: {exc}')
        rclpy.try_shutdown()
        return 2
    # rclpy (Jazzy) re-yields every started-but-not-running task on each spin: with
    # all pool threads busy, the executor loop spins and starves the workers. Enough
    # threads that a queued callback always starts at once (they then wait on the
    # memory's own locks) keeps it quiet.
    executor = MultiThreadedExecutor(num_threads=EXECUTOR_THREADS)
    executor.add_node(node)
    code = 0
    try:
        if node.get_parameter('autostart').value:
            if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
                node.get_logger().fatal(f'could not configure: {node.configure_error}')
                code = 1
            elif node.trigger_activate() != TransitionCallbackReturn.SUCCESS:
                code = 1
        if code == 0:
            spin(executor)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass  # a requested shutdown: fall through to the clean close below
    finally:
        node.release()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return code


if __name__ == '__main__':
    sys.exit(main())
