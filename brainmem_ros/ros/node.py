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

This module is the lifecycle and the process; the callbacks are in
:mod:`~brainmem_ros.ros.inputs` (topics in), :mod:`~brainmem_ros.ros.services` and
:mod:`~brainmem_ros.ros.outputs` (events, markers), over the shared state of
:mod:`~brainmem_ros.ros.node_base`.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rclpy
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped
from lifecycle_msgs.srv import ChangeState
from rcl_interfaces.msg import SetParametersResult
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.exceptions import ParameterException
from rclpy.executors import MultiThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.lifecycle import LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from brainmem_ros.errors import (
    BrainMemError,
    ConfigError,
    ModelError,
    SchemaVersionError,
    StoreError,
    StoreInUseError,
)
from brainmem_ros.memory.brainmem import BrainMem
from brainmem_ros.memory.config import MemoryConfig
from brainmem_ros.msg import MemoryEvent as MemoryEventMsg
from brainmem_ros.msg import Observation
from brainmem_ros.ros import convert, params, rosout
from brainmem_ros.ros.ingest import IngestWorker
from brainmem_ros.ros.inputs import InputCallbacks
from brainmem_ros.ros.node_base import EPISODE_MAX_BYTES
from brainmem_ros.ros.outputs import OutputCallbacks
from brainmem_ros.ros.pose_history import PoseHistory
from brainmem_ros.ros.query_server import QueryServer
from brainmem_ros.ros.services import ServiceCallbacks
from brainmem_ros.ros.shutdown import StopSignals
from brainmem_ros.ros.spin import SpinThread
from brainmem_ros.srv import Consolidate, Forget, Reinforce, Retrieve, SetContext, StateOf, Stats, Store
from brainmem_ros.tuning import tune_interpreter

__all__ = ['EPISODE_MAX_BYTES', 'EXECUTOR_THREADS', 'BrainMemNode', 'main']

EXECUTOR_THREADS = 16


class BrainMemNode(ServiceCallbacks, InputCallbacks, OutputCallbacks):
    """Serves Store / Retrieve / Reinforce / Consolidate / Forget / Stats / SetContext / StateOf."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._log_handler = rosout.attach(self.get_logger())
        try:
            params.declare(self)
        except Exception:
            # A wrongly typed -p value: the node made so far is destroyed before the error goes
            # up, or its DDS participant outlived it (and Fast DDS destroyed it at exit).
            self.destroy_node()
            raise
        self.add_on_set_parameters_callback(self.parameters_callback)
        change_state = getattr(self, '_service_change_state', None)
        if change_state is not None:
            # rclpy's own handler raises RCLError (and the executor ends the process)
            # for a transition the current state does not have.
            self._rclpy_change_state = change_state.callback
            change_state.callback = self.change_state_callback

    def destroy_node(self) -> None:
        """Destroy the node; the core's logging goes back to Python's root logger.

        rclpy's ``LifecycleNode.destroy_node`` (Jazzy) leaves its lifecycle state machine,
        which holds the node's handle, so the node was never finalised and its DDS
        participant lived on (one per node made and destroyed in a process: 29 by the end of
        a test session, which Fast DDS then destroyed in an exit handler and deadlocked, as
        in eProsima/Fast-DDS#6193). The state machine is released with the node.
        """
        rosout.detach(self._log_handler)
        super().destroy_node()
        self._state_machine.destroy_when_not_in_use()

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
        self._poses = PoseHistory(cfg.pose_history_s)
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
                                    batch_size=cfg.ingest_batch_size, warn=self._ingest_warning,
                                    share=self._share_stored)
        self._create_endpoints(cfg)
        self.get_logger().info(
            f'memory at {data_dir}: {stats.units} units ({stats.active_units} active), '
            f'index {stats.index_kind}: {self.mem.index_status}')

    def _configure_reason(self, exc: Exception) -> str:
        data_dir = self.cfg.data_dir if self.cfg is not None else '?'
        text = str(exc) or type(exc).__name__
        if isinstance(exc, ConfigError | ModelError | SchemaVersionError | StoreInUseError):  # say what to do
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
        h.append(self.input_subscription(Observation, cfg.observation_topic, self.observation_callback,
                                         qos, lost=lost))
        if cfg.shared_observation_topic:
            # A topic, not a field of Observation: a new field would change the message's
            # type hash and make every recorded bag of it unreadable by subscribers.
            h.append(self.input_subscription(Observation, cfg.shared_observation_topic,
                                             self.shared_observation_callback, qos, lost=lost))
        for topic in cfg.text_topics:
            h.append(self.input_subscription(String, topic, self._text_callback_for(topic), qos, lost=lost))
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
        # The planner's queries: a node and executor of their own (ros/query_server.py).
        self._queries = QueryServer(self, [(Retrieve, 'retrieve', self.retrieve_callback),
                                           (StateOf, 'state_of', self.state_of_callback)])
        h.append(self.create_service(Stats, 'stats', self.stats_callback, callback_group=g_q))
        h.append(self.create_service(Reinforce, 'reinforce', self.reinforce_callback, callback_group=g_a))
        h.append(self.create_service(Consolidate, 'consolidate', self.consolidate_callback,
                                     callback_group=g_a))
        h.append(self.create_service(Forget, 'forget', self.forget_callback, callback_group=g_a))
        h.append(self.create_service(SetContext, 'set_context', self.set_context_callback,
                                     callback_group=g_a))
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

    def hurry(self) -> None:
        """Asked again to stop while releasing: drop the observations not stored yet."""
        ingest = self._ingest
        if ingest is not None:
            dropped = ingest.discard()
            self.get_logger().warning(f'asked again to stop: {dropped} queued observation(s) dropped; '
                                      'closing the store')

    def _teardown(self) -> None:
        self._active = False
        if self._queries is not None:
            self._queries.close()
            self._queries = None
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


def main(args: list[str] | None = None) -> int:
    """Run the node until SIGINT/SIGTERM; everything acknowledged is on disk on exit."""
    logging.basicConfig(level=logging.WARNING)
    signals = StopSignals()
    signals.install()  # before rclpy starts; rclpy's own handlers stay out (see StopSignals)
    rclpy.init(args=args if args is not None else sys.argv,
               signal_handler_options=SignalHandlerOptions.NO)
    try:
        node = BrainMemNode()
    except ParameterException as exc:
        # A wrongly typed or out-of-range -p value or params file entry: name it, no traceback.
        rclpy.logging.get_logger('brainmem').fatal(f'invalid parameter: {exc}')
        rclpy.try_shutdown()
        return 2
    signals.hurry_with(node.hurry)
    # rclpy (Jazzy) re-yields every started-but-not-running task on each spin: with
    # all pool threads busy, the executor loop spins and starves the workers. Enough
    # threads that a queued callback always starts at once (they then wait on the
    # memory's own locks) keeps it quiet.
    executor = MultiThreadedExecutor(num_threads=EXECUTOR_THREADS)
    executor.add_node(node)
    code = 0
    try:
        # A signal while starting is read once the transition under way is over.
        if node.get_parameter('autostart').value and not signals.requested:
            if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
                node.get_logger().fatal(f'could not configure: {node.configure_error}')
                code = 1
            elif not signals.requested and node.trigger_activate() != TransitionCallbackReturn.SUCCESS:
                code = 1
        if code == 0 and not signals.requested:
            spinning = SpinThread(executor, name='brainmem-executor')
            if not signals.wait(lambda: spinning.running):
                node.get_logger().fatal('the executor stopped spinning')
                code = 1
            spinning.stop()
    finally:
        node.release()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
        signals.closed()
    return code


if __name__ == '__main__':
    sys.exit(main())
