"""The memory node's services: Store, Retrieve, Reinforce, Consolidate, Forget, Stats,
SetContext and StateOf.

Every request gets an answer: ``success=false`` and a message naming the problem for
a refused request (or an inactive node), an internal error logged with its traceback.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from brainmem_ros.errors import BrainMemError, BusyError, InvalidInputError, UnknownIdError
from brainmem_ros.memory.brainmem import BrainMem
from brainmem_ros.ros import convert
from brainmem_ros.ros.node_base import MemoryNodeBase
from brainmem_ros.srv import Consolidate, Forget, Reinforce, Retrieve, SetContext, StateOf, Stats, Store

R = TypeVar('R')


class ServiceCallbacks(MemoryNodeBase):
    """The node's service callbacks (and the consolidation timer's)."""

    def _serve(self, response: R, fn: Callable[[BrainMem, R], None]) -> R:
        # Every request gets an answer: domain errors name the problem, anything
        # else is logged with its traceback and reported as an internal error.
        start = time.perf_counter()
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
        # Retrieve_Response -> retrieve: the service's name as the node serves it.
        self._timings.record(type(response).__name__.removesuffix('_Response').lower(),
                             time.perf_counter() - start)
        return response

    def store_callback(self, request: Store.Request, response: Store.Response) -> Store.Response:
        """Store one observation."""
        def run(mem: BrainMem, resp: Store.Response) -> None:
            kwargs = convert.observation_kwargs(request.observation, episode_id=self.episode_id,
                                                pose_at=self._poses.at, now=self.now(),
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
            elif request.radius:
                # Silently ignored, it would answer a question the planner did not ask.
                msg = f'radius={request.radius:g} without use_pose: set use_pose and pose to filter by place'
                raise InvalidInputError(msg)
            kwargs: dict[str, Any] = dict(
                goal=request.goal or self.goal, state=request.current_state,
                top_k=request.top_k, episode_id=request.episode_id or None,
                types=list(request.types) or None, since=convert.from_time(request.since, 'since'),
                until=convert.from_time(request.until, 'until'), near=near, radius=radius,
                include_marginalized=request.include_marginalized,
                as_of=convert.from_time(request.as_of, 'as_of'))
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
            if request.robot_id and self._fleet is None:
                # The ids are another robot's: applied here they would reward whichever
                # local memories happen to have the same numbers.
                msg = (f'robot_id={request.robot_id!r}: rewarding another robot\'s memories needs the '
                       'fleet tier, which is off (leave robot_id empty for this robot\'s memories)')
                raise InvalidInputError(msg)
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
        except BusyError:
            # A cycle asked for through the service (or a long one) still runs: this
            # period's is not needed on top of it.
            self.get_logger().info('periodic consolidation skipped: a cycle is still running')
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
                'vectors': _vector_cache_status(mem),
                'enrichment': s.enrichment, 'episode_id': self.episode_id, 'goal': self.goal,
                'ingest_queue': self._ingest.depth() if self._ingest else 0,
                'ingest': {**(vars(self._ingest.counters) if self._ingest else {}),
                           'lost_dds': self._lost_dds, 'ignored_inactive': self._ignored_inactive},
                'data_dir': str(mem.path),
                'fleet': vars(self._fleet.stats()) if self._fleet is not None else {'enabled': False},
                'service_ms': {name: vars(t) for name, t in self._timings.summary().items()}})
            resp.message = f'{s.units} memories'
        return self._serve(response, run)

    def state_of_callback(self, request: StateOf.Request, response: StateOf.Response
                          ) -> StateOf.Response:
        """What is (or was, as_of) true of an entity: facts that hold first, then history."""
        def run(mem: BrainMem, resp: StateOf.Response) -> None:
            as_of = convert.from_time(request.as_of, 'as_of')
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


def _vector_cache_status(mem: BrainMem) -> str:
    cache = mem.store_db.vector_cache
    if cache is None:
        return 'off'
    if cache.complete.is_set():
        return f'in memory ({len(cache)} held)'
    return f'reading ({len(cache)} held so far; the rest from SQLite meanwhile)'
