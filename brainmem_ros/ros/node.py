"""``brainmem_node``: the memory as a managed ROS 2 node.

A thin layer: it converts messages, calls :class:`BrainMem`, and publishes what
changed. Lifecycle: configure loads the models and opens the store, activate
starts topics and services, deactivate stops them, cleanup closes the store,
shutdown parks pending enrichment. With ``autostart`` (default) the node walks
itself to active, so ``ros2 run`` works without a lifecycle manager.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import rclpy
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.exceptions import InvalidHandle
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from brainmem_ros.errors import BrainMemError, ModelError, UnknownIdError
from brainmem_ros.memory.brainmem import BrainMem
from brainmem_ros.memory.config import MemoryConfig
from brainmem_ros.memory.types import MemoryEvent, ObservationInput, Pose
from brainmem_ros.msg import MemoryEvent as MemoryEventMsg
from brainmem_ros.msg import Observation
from brainmem_ros.ros import convert, params
from brainmem_ros.ros.ingest import IngestWorker
from brainmem_ros.ros.markers import memory_markers
from brainmem_ros.ros.spin import spin
from brainmem_ros.srv import Consolidate, Forget, Reinforce, Retrieve, SetContext, Stats, Store
from brainmem_ros.tuning import tune_interpreter

R = TypeVar('R')
EXECUTOR_THREADS = 16


class BrainMemNode(LifecycleNode):
    """Serves Store / Retrieve / Reinforce / Consolidate / Forget / Stats / SetContext."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('brainmem', **kwargs)
        params.declare(self)
        self.mem: BrainMem | None = None
        self.cfg: params.NodeConfig | None = None
        self.episode_id = ''
        self.goal = ''
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
        self._admin_group = ReentrantCallbackGroup()
        self.add_on_set_parameters_callback(self.parameters_callback)

    # -- lifecycle -------------------------------------------------------------------

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Validate parameters, load the models and open the store."""
        try:
            self.cfg, memory_cfg = params.load(self)
            data_dir = Path(os.path.expanduser(self.cfg.data_dir))
            llm_extractor, reasoner = self._llm(memory_cfg)
            self.mem = BrainMem.open(data_dir, memory_cfg, llm_extractor=llm_extractor,
                                     reasoner=reasoner, on_event=self._event_callback)
        except BrainMemError as exc:
            self.get_logger().error(f'configure failed: {exc}')
            return TransitionCallbackReturn.FAILURE
        tune_interpreter(switch_ms=self.cfg.gil_switch_ms, gc_gen0=self.cfg.gc_gen0_threshold)
        self.episode_id = self.cfg.episode_id
        self._ingest = IngestWorker(self.mem, maxsize=self.cfg.ingest_queue_size,
                                    batch_size=self.cfg.ingest_batch_size, warn=self._ingest_warning)
        stats = self.mem.stats()
        self.get_logger().info(
            f'memory at {data_dir}: {stats.units} units ({stats.active_units} active), '
            f'index {stats.index_kind}: {self.mem.index_status}')
        return TransitionCallbackReturn.SUCCESS

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

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Start subscriptions, publishers, services and timers."""
        assert self.cfg is not None
        cfg = self.cfg
        qos = QoSProfile(depth=cfg.qos_depth, reliability=ReliabilityPolicy.RELIABLE
                         if cfg.qos_reliable else ReliabilityPolicy.BEST_EFFORT)
        self._events_pub = self.create_publisher(MemoryEventMsg, cfg.events_topic, 50)
        self._markers_pub = self.create_publisher(MarkerArray, cfg.markers_topic, 1)
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
            h.append(self.create_subscription(pose_cls, cfg.pose_topic, self.pose_callback, qos,
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
        if cfg.markers_period_s > 0:
            h.append(self.create_timer(cfg.markers_period_s, self.markers_callback, callback_group=g_a))
        else:
            h.append(self.create_timer(0.5, self.markers_callback, callback_group=g_a))
        if cfg.consolidate_period_s > 0:
            h.append(self.create_timer(cfg.consolidate_period_s, self.consolidate_timer_callback,
                                       callback_group=g_a))
        self._markers_dirty.set()
        self.get_logger().info('active: serving store, retrieve, reinforce, consolidate, forget, '
                               'stats, set_context')
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop topics, services and timers (the store stays open)."""
        for handle in self._handles:
            self._destroy(handle)
        self._handles.clear()
        for pub in (self._events_pub, self._markers_pub):
            if pub is not None:
                self.destroy_publisher(pub)
        self._events_pub = self._markers_pub = None
        return TransitionCallbackReturn.SUCCESS

    def _destroy(self, handle: Any) -> None:
        kind = type(handle).__name__
        destroy: Callable[[Any], Any] = {  # type: ignore[assignment]
            'Subscription': self.destroy_subscription, 'Service': self.destroy_service,
            'Timer': self.destroy_timer}[kind]
        destroy(handle)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Close the store (saves the index, parks pending enrichment)."""
        self._close()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Flush and close whatever state the node is in."""
        if self._handles:
            self.on_deactivate(state)
        self._close()
        return TransitionCallbackReturn.SUCCESS

    def release(self) -> None:
        """Stop serving and close the store, whatever the lifecycle state (process exit)."""
        if self._handles:
            self.on_deactivate(LifecycleState(label='active', state_id=3))
        self._close()

    def _close(self) -> None:
        if self._ingest is not None:
            self._ingest.close()  # everything already received is stored before the store closes
            self._ingest = None
        if self.mem is not None:
            self.mem.close()
            self.mem = None

    # -- parameters ------------------------------------------------------------------

    def parameters_callback(self, changes: list[Parameter]) -> SetParametersResult:
        """Validate run-time changes of retrieval/dynamics options and apply them."""
        updates = {p.name.removeprefix('memory.'): p.value for p in changes
                   if p.name.startswith('memory.')}
        if not updates or self.mem is None:
            return SetParametersResult(successful=True)
        try:
            new = MemoryConfig.from_mapping(updates, base=self.mem.config)
        except BrainMemError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        self.mem.config = new
        self.mem.retriever.config = new.retrieval
        return SetParametersResult(successful=True)

    # -- inputs ----------------------------------------------------------------------

    def _memory(self) -> BrainMem:
        if self.mem is None:
            msg = 'memory is not configured (node inactive)'
            raise BrainMemError(msg)
        return self.mem

    def _ingest_warning(self, text: str) -> None:
        self.get_logger().warning(text, throttle_duration_sec=2.0)

    def _enqueue(self, item: ObservationInput) -> None:
        if self._ingest is None:
            self.get_logger().warning('observation ignored: node not configured',
                                      throttle_duration_sec=5.0)
            return
        self._ingest.put(item)

    def observation_callback(self, msg: Observation) -> None:
        """Queue an Observation message for storing."""
        try:
            kwargs = convert.observation_kwargs(msg, episode_id=self.episode_id,
                                                latest_pose=self._latest_pose)
        except BrainMemError as exc:
            self._ingest_warning(f'observation not stored: {exc}')
            return
        self._enqueue(ObservationInput(text=msg.text, **kwargs))

    def _text_callback_for(self, topic: str) -> Callable[[String], None]:
        return lambda msg: self.text_callback(msg, topic)

    def text_callback(self, msg: String, topic: str) -> None:
        """Queue a plain-text caption from one of ``text_topics``."""
        self._enqueue(ObservationInput(text=msg.data, source=topic, episode_id=self.episode_id,
                                       pose=self._latest_pose))

    def message_lost_callback(self, event: Any) -> None:
        """DDS dropped input messages (queue depth exceeded): say so."""
        self._ingest_warning(f'{event.total_count_change} input message(s) lost by DDS '
                             f'({event.total_count} in all): raise qos_depth')

    def pose_callback(self, msg: PoseStamped | PoseWithCovarianceStamped) -> None:
        """Remember the latest robot pose (attached to observations that carry none)."""
        pose = msg.pose.pose if isinstance(msg, PoseWithCovarianceStamped) else msg.pose
        try:
            self._latest_pose = convert.pose_from_msg(pose, msg.header.frame_id)
        except BrainMemError as exc:
            self.get_logger().warning(f'pose ignored: {exc}', throttle_duration_sec=5.0)

    def episode_callback(self, msg: String) -> None:
        """Set the current episode."""
        self.episode_id = msg.data.strip()[:256]

    def goal_callback(self, msg: String) -> None:
        """Set the current goal."""
        self.goal = msg.data.strip()[:4096]

    # -- services --------------------------------------------------------------------

    def _serve(self, response: R, fn: Callable[[BrainMem, R], None]) -> R:
        # Every request gets an answer: domain errors name the problem, anything
        # else is logged with its traceback and reported as an internal error.
        try:
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
                                                latest_pose=self._latest_pose)
            result = mem.store_ex(request.observation.text, **kwargs)
            resp.id = result.unit.id
            resp.unit = convert.unit_to_msg(result.unit)
            resp.message = result.message
        return self._serve(response, run)

    def retrieve_callback(self, request: Retrieve.Request, response: Retrieve.Response
                          ) -> Retrieve.Response:
        """Goal-directed retrieval."""
        def run(mem: BrainMem, resp: Retrieve.Response) -> None:
            near = radius = None
            if request.use_pose:
                near = convert.pose_from_msg(request.pose.pose, request.pose.header.frame_id)
                radius = convert.check_finite('radius', request.radius)
            results = mem.retrieve(
                request.query, goal=request.goal or self.goal, state=request.current_state,
                top_k=request.top_k, episode_id=request.episode_id or None,
                types=list(request.types) or None, since=convert.from_time(request.since),
                until=convert.from_time(request.until), near=near, radius=radius,
                include_marginalized=request.include_marginalized,
                as_of=convert.from_time(request.as_of))
            resp.memories = [convert.scored_to_msg(r) for r in results]
            resp.message = f'{len(results)} memories'
        return self._serve(response, run)

    def reinforce_callback(self, request: Reinforce.Request, response: Reinforce.Response
                           ) -> Reinforce.Response:
        """Reward or punish memories the planner used."""
        def run(mem: BrainMem, resp: Reinforce.Response) -> None:
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
                'ingest': vars(self._ingest.counters) if self._ingest else {},
                'data_dir': str(mem.path)})
            resp.message = f'{s.units} memories'
        return self._serve(response, run)

    def set_context_callback(self, request: SetContext.Request, response: SetContext.Response
                             ) -> SetContext.Response:
        """Set the current episode and goal."""
        def run(mem: BrainMem, resp: SetContext.Response) -> None:
            if request.episode_id:
                self.episode_id = request.episode_id.strip()[:256]
            if request.clear_goal:
                self.goal = ''
            elif request.goal:
                self.goal = request.goal.strip()[:4096]
            resp.episode_id, resp.goal = self.episode_id, self.goal
            resp.message = 'context updated'
        return self._serve(response, run)

    # -- outputs ---------------------------------------------------------------------

    def _event_callback(self, event: MemoryEvent) -> None:
        self._markers_dirty.set()
        pub = self._events_pub
        if pub is None:
            return
        msg = MemoryEventMsg(kind=event.kind, ids=list(event.ids), detail=event.detail[:1000])
        msg.stamp = convert.to_time(time.time())
        try:
            pub.publish(msg)
        except InvalidHandle:
            return  # the publisher was destroyed by a concurrent deactivation

    def markers_callback(self) -> None:
        """Publish markers when something changed, or at the configured period."""
        cfg, pub, mem = self.cfg, self._markers_pub, self.mem
        if cfg is None or pub is None or mem is None or cfg.max_markers == 0:
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
            rows = mem.store_db.query('SELECT id FROM units WHERE pose_frame IS NOT NULL '
                                      'ORDER BY id DESC LIMIT ?', (cfg.max_markers,))
            units = list(mem.store_db.get_units(r[0] for r in rows).values())
            pub.publish(memory_markers(units, stamp=time.time()))
        except (BrainMemError, InvalidHandle):
            return  # deactivated or closed while this timer tick was running


def main(args: list[str] | None = None) -> int:
    """Run the node until SIGINT/SIGTERM; everything acknowledged is on disk on exit."""
    logging.basicConfig(level=logging.WARNING)
    rclpy.init(args=args if args is not None else sys.argv)
    node = BrainMemNode()
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
                node.get_logger().fatal('could not configure: see the error above')
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
