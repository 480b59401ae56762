"""Root: one open file, its domains, and the locks that keep them apart.

Lock order: ``_agents_mu`` (registry and context table) is never taken while
a domain lock is held; a domain lock is taken before ``pool_lock`` (the shared
L3 pool), and both before the engine's own lock. ``engine`` is replaced by an
in-place compaction (``memhop.root.compaction``) while all of these are held:
read it under one of them. A domain's first call builds its mirrors without
the registry lock (``_loading``): other domains go on meanwhile, and whatever
needs that domain, or the whole file (``quiesced``, ``close``), waits for it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass

from memhop import ids
from memhop.config import Defaults, ProfileInput
from memhop.domain import map_file
from memhop.domain.context import DomainContext, MeteredModel
from memhop.domain.mirrors import Mirrors, build_mirrors
from memhop.domain.recall_file import RecallFile
from memhop.domain.warm import WarmStart
from memhop.engine import Engine, compact_to
from memhop.errors import AgentNotFoundError, ClosedError, InvalidQueryError
from memhop.layers import profile, registry
from memhop.llm import Model, Usage
from memhop.records import AgentType, ProfileSlot
from memhop.root import compaction, dreams, pacing, recall_upkeep, recall_warm
from memhop.root.dream_threads import DreamThreads
from memhop.root.heap import HeapTrim, find_trim
from memhop.root.hold import DomainHold
from memhop.root.pacing import BUILD_YIELD_S, SharedPace

Clock = Callable[[], int]
MAX_SUB_AGENT_NAME_BYTES = registry.MAX_TENANT_NAME_BYTES


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """One row of ``agents()``: the domain id, its name, whether it is the primary."""

    agent_id: int
    name: str
    primary: bool


class Root:
    """The composition root: lock a domain, compose the layers, return records."""

    def __init__(self, engine: Engine, defaults: Defaults, model: Model, clock: Clock) -> None:
        self.engine = engine
        self.defaults = defaults.normalized()
        self.clock = clock
        self._agents_mu = threading.Lock()
        self._contexts: dict[int, DomainContext] = {}
        # Domains whose mirrors are being built outside the registry lock (a build reads the
        # whole domain: seconds at 10^5 turns). Whoever needs one of them waits on ``_loaded``.
        self._loading: set[int] = set()
        self._loaded = threading.Condition(self._agents_mu)
        self._meters: dict[int, MeteredModel] = {ids.PRIMARY_AGENT_ID: MeteredModel(model)}
        self._registry = registry.load_registry(engine)
        self.closed = False  # read by every hold: an attribute, not a property
        self.closing = threading.Event()  # set first thing in close(): Dream passes stop
        self.dreams = DreamThreads()  # background passes (and upkeep), joined by close()
        self.policy = compaction.PolicyMark()  # where the dead-bytes policy last measured
        self.pool_lock = threading.Lock()  # the L3 pool shared by domains; inside a domain lock
        # The file as opened, for an in-place compaction: it must still be this one.
        self.file_path = os.path.abspath(engine.path)
        self.file_identity = compaction.identity(self.file_path)
        self.scene_maps = map_file.SceneMaps(self.file_path)
        self.recall_file = RecallFile(self.file_path)
        engine.watch_deletes(self.recall_file.deleted)
        self.compacting = threading.Lock()  # held by one compaction from start to end
        self.heap = HeapTrim(find_trim() if self.defaults.trim_heap else None)

    # ---- lifecycle -----------------------------------------------------------------------

    def check_open(self) -> None:
        if self.closed:
            msg = "database is closed"
            raise ClosedError(msg)

    def close(self) -> None:
        """Cancel every domain's work, wait for each domain's lock, then close the file."""
        with self._agents_mu:
            self.check_open()
            self.closing.set()
            self.closed = True
            self._await_loads()  # a build in flight reads the file; it ends, and is dropped
            contexts = list(self._contexts.values())
        for ctx in contexts:
            ctx.cancel.set()
        self.dreams.close_and_join()
        recalled = []
        for ctx in contexts:  # a barrier: no call is mid-write when the file closes
            with ctx.lock:
                dreams.flush(self.engine, ctx)
                state = recall_warm.closing_state(self.engine, ctx)
                if state is not None:
                    recalled.append((ctx.agent_id, state))
        try:
            # The snapshot first, so the side files can name it (checked cheaply at open).
            self.engine.checkpoint_if_stale(seed=True)
            with self._agents_mu:
                live = set(self._meters)
            self.scene_maps.save(self.engine, contexts, live)
            self.recall_file.save(self.engine, recalled)
        finally:  # the map only saves time at the next open: the file closes whatever it did
            for ctx in contexts:
                ctx.drop_recall()
            self.recall_file.close()
            self.engine.close()
            for ctx in contexts:  # a warm build still in flight stops at its next read
                if ctx.warm is not None:
                    ctx.warm.settle()
            with self._agents_mu:  # a closed DB the host still holds keeps no domain's rows
                self._contexts.clear()

    def checkpoint(self) -> None:
        with self._agents_mu:  # the engine is not swapped meanwhile
            self.check_open()
            for ctx in list(self._contexts.values()):
                with ctx.lock:
                    dreams.flush(self.engine, ctx)
            self.engine.checkpoint(seed=True)

    def compact_to(self, new_path: str | os.PathLike[str]) -> None:
        """Write a compacted copy; a point-in-time copy, no domain lock taken."""
        with self._agents_mu:
            self.check_open()
            compact_to(self.engine, new_path)

    def compact(self) -> None:
        """Compact the open file in place (``memhop.root.compaction.compact``)."""
        compaction.compact(self)

    def compact_if_due(self, *, after_pass: bool = False) -> None:
        """Compact in place when dead bytes pass ``Defaults.compact_dead_ratio`` (never raises;
        ``after_pass``: once enough changed since the policy last measured)."""
        compaction.compact_if_due(self, after_pass=after_pass)

    @contextlib.contextmanager
    def quiesced(self) -> Iterator[list[DomainContext]]:
        """Hold the registry lock, every live domain's lock (ascending) and ``pool_lock``.

        No call of this handle touches the file in the body; the contexts are
        yielded. For work that replaces the engine. Hold no domain lock when
        entering: the registry lock comes first, as everywhere.
        """
        with self._agents_mu:
            self._await_loads()  # no build may read the engine while it is replaced
            self.check_open()
            contexts = [self._contexts[agent_id] for agent_id in sorted(self._contexts)]
            for ctx in contexts:
                if ctx.warm is not None:
                    ctx.warm.settle()
            with contextlib.ExitStack() as held:
                for ctx in contexts:
                    held.enter_context(ctx.lock)
                held.enter_context(self.pool_lock)
                yield contexts

    def stats(self) -> tuple[int, int, dict[int, Usage]]:
        """Return file bytes, live records and model usage per domain (no domain lock)."""
        with self._agents_mu:
            self.check_open()
            file_bytes, records = self.engine.stats()
            usage = {agent: meter.usage() for agent, meter in sorted(self._meters.items())}
        return file_bytes, records, usage

    # ---- domains -------------------------------------------------------------------------

    def domain(
        self, agent_id: int, *, scene_op: bool = False, background: bool = False
    ) -> AbstractContextManager[DomainContext]:
        """Hold one domain's lock for the body; a context reclaimed meanwhile is re-fetched.

        The body finds the domain's mirrors built, unless ``scene_op``: a call
        on one scene, which reads it through ``ctx.scene_mirrors`` and writes
        to its open turn through ``ctx.apply`` (a warm domain's view serves it).
        ``background``: a hold of a Dream pass, not counted as a call of the host's.
        """
        return DomainHold(self, agent_id, scene_op, background)

    @contextlib.contextmanager
    def exclusive_domain(self, agent_id: int) -> Iterator[None]:
        """Hold any domain of the file against its own calls, reached by this handle or not.

        A domain this handle reached is held by its lock. One never reached has
        no context, and none can be made while the registry lock is held, so
        the body runs under that lock (engine I/O and ``pool_lock`` only).
        For work one call does across every domain (DeleteL3's anchor detach);
        hold no domain lock when entering.
        """
        with self._agents_mu:
            self.check_open()
            if agent_id not in self._meters:
                yield
                return
        with self.domain(agent_id):
            yield

    def _await_loads(self, agent_id: int | None = None) -> None:
        """Wait until no build of ``agent_id``'s mirrors (or of any domain's) is in flight.

        Called holding ``_agents_mu``, which the wait releases and takes back.
        """
        while agent_id in self._loading if agent_id is not None else self._loading:
            self._loaded.wait()

    def context(self, agent_id: int) -> DomainContext:
        """The domain's context, made (its mirrors built, or a warm start) on first use."""
        contexts = self._contexts
        ctx = contexts.get(agent_id)
        if ctx is not None and len(contexts) == 1 and not self._loading:
            # The usual call: the one domain, made and not loading, no other to sweep
            # (each read is whole; the hold checks the root is open once it has the lock).
            return ctx
        with self._agents_mu:
            self._await_loads(agent_id)
            self.check_open()
            self._sweep_idle(agent_id)
            ctx = self._contexts.get(agent_id)
            if ctx is not None:
                return ctx
            meter = self._meters.get(agent_id)
            if meter is None:
                msg = f"agent {ids.format_id(agent_id)} is not a domain of this file"
                raise AgentNotFoundError(msg)
            # Each map is handed to its domain once: the root keeps none (close reads the file).
            section = self.scene_maps.take(agent_id)
            if section is not None:  # scene reads start from the map; the build comes later
                build = functools.partial(self._build_mirrors, agent_id)
                warm_start = WarmStart(section, build)
                return self._register(DomainContext(agent_id, meter, None, warm_start))
            self._loading.add(agent_id)
        # Built without the registry lock: calls on other domains go on meanwhile. Nothing
        # writes this domain until it is done (its calls wait for the context, and a domain
        # with a model is reached only through it), and nothing swaps the engine or closes
        # the file until then (``quiesced`` and ``close`` wait for builds in flight).
        try:
            mirrors = self._build_mirrors(agent_id)
        except BaseException:
            with self._agents_mu:
                self._load_ended(agent_id)
            raise
        with self._agents_mu:
            self._load_ended(agent_id)
            self.check_open()  # closed meanwhile: the context is dropped
            return self._register(DomainContext(agent_id, meter, mirrors))

    def _build_mirrors(self, agent_id: int) -> Mirrors:
        pace = SharedPace(functools.partial(self.make_way, building=agent_id), BUILD_YIELD_S)
        with self.engine.paced(pace):
            built = build_mirrors(self.engine, agent_id, pace)
        # A closed engine lists no ids: a build that ran into the close read nothing.
        self.check_open()
        return built

    def make_way(self, longest: float = 0.0, building: int | None = None) -> None:
        """Pause while a call is in flight (``pacing.make_way``): a domain's call holds its
        lock, a recall decodes its saved state, or, for a build of ``building``, a smaller
        domain's first call builds that domain (the host waits for it: it goes first)."""
        pacing.make_way(functools.partial(self._busy, building), longest)

    def _busy(self, building: int | None) -> bool:
        if self.recall_file.decoding or any(
            ctx.lock.locked() for ctx in list(self._contexts.values())
        ):
            return True
        others = [agent for agent in list(self._loading) if agent != building]
        if building is None or not others:
            return False
        sizes = self.engine.live_index()  # each domain's ids: their count is kept
        held = {agent: len(sizes[agent]) if agent in sizes else 0 for agent in (building, *others)}
        return any(held[agent] < held[building] for agent in others)

    def _register(self, ctx: DomainContext) -> DomainContext:
        """Make ``ctx`` its domain's context (called holding ``_agents_mu``)."""
        ctx.saved_recall = functools.partial(self.recall_file.take, ctx.agent_id)
        ctx.on_turn_settled = functools.partial(dreams.after_update, self, ctx.agent_id)
        ctx.on_turn_opened = functools.partial(dreams.after_search, self, ctx.agent_id)
        ctx.on_repack_due = functools.partial(recall_upkeep.ask_repack, self, ctx.agent_id)
        ctx.last_used_ms = self.clock()
        self._contexts[ctx.agent_id] = ctx
        return ctx

    def _load_ended(self, agent_id: int) -> None:
        """Wake whoever waits on ``agent_id``'s build (called holding ``_agents_mu``)."""
        self._loading.discard(agent_id)
        self._loaded.notify_all()

    def _sweep_idle(self, keep: int) -> None:
        """Free contexts idle past the TTL whose lock is free (called under ``_agents_mu``).

        The primary is never reclaimed. A reclaimed domain's open turn is gone:
        it cannot be rebuilt from records, so its next turn write is refused.
        """
        ttl = self.defaults.agent_idle_ttl_ms
        if ttl <= 0 or len(self._contexts) == (keep in self._contexts):  # none but the caller's
            return
        now = self.clock()
        for agent_id, ctx in list(self._contexts.items()):
            if agent_id in (keep, ids.PRIMARY_AGENT_ID) or now - ctx.last_used_ms <= ttl:
                continue
            if ctx.warm is not None and ctx.warm.running():
                continue  # its build reads the file; reclaimed once it is done
            if ctx.lock.acquire(blocking=False):
                ctx.reclaimed = True
                del self._contexts[agent_id]
                ctx.lock.release()

    def _point_at(self, agent_id: int, model: Model) -> None:
        """Make a domain use ``model`` from now on (its usage meter carries over); under
        ``_agents_mu``."""
        meter = self._meters.get(agent_id)
        if meter is None:
            self._meters[agent_id] = MeteredModel(model)
        else:
            meter.model = model

    def sub_agent(self, model: Model, seed: ProfileInput) -> int:
        """Return the domain registered under ``seed.name``, creating it on first use.

        The profile is written only when the domain has none (which also heals
        a crash between the registration and the profile).
        """
        if not isinstance(seed, ProfileInput):
            msg = f"profile must be a memhop.ProfileInput, not {type(seed).__name__}"
            raise InvalidQueryError(msg)
        tenant = registry.normalise_tenant_name(seed.name)
        with self._agents_mu:
            self.check_open()
            agent_id = self._registry.by_name.get(tenant)
            if agent_id is None:
                self._registry.require_resolved()
                taken = set(self.engine.agents()) | set(self._registry.by_agent)
                agent_id = registry.draw_agent_id(taken)
                registry.write_registration(self.engine, agent_id, tenant)
                self._registry = registry.load_registry(self.engine)
            if not profile.has_profile(self.engine, agent_id):
                slot = ProfileSlot(
                    name=tenant,
                    role=seed.role,
                    personality=seed.personality,
                    preferences=dict(seed.preferences),
                    agent_type=AgentType.SUB,
                    updated_at_ms=self.clock(),
                )
                profile.put_profile(self.engine, agent_id, slot)
            self._point_at(agent_id, model)
            return agent_id

    def tenant_name(self, agent_id: int) -> str | None:
        with self._agents_mu:
            return self._registry.by_agent.get(agent_id)

    def agent(self, model: Model, agent_id: int) -> int:
        """Reach an existing domain by id and point it at ``model``."""
        with self._agents_mu:
            self.check_open()
            if agent_id != ids.PRIMARY_AGENT_ID and agent_id not in self._registry.by_agent:
                msg = f"agent {ids.format_id(agent_id)} is not registered in this file"
                raise AgentNotFoundError(msg)
            self._point_at(agent_id, model)
            return agent_id

    def agents(self) -> list[AgentEntry]:
        """The primary first, then registered domains ascending, read from the records."""
        with self._agents_mu:
            self.check_open()
            current = registry.load_registry(self.engine)
            current.require_resolved()
            stored = profile.profile_or_empty(self.engine, ids.PRIMARY_AGENT_ID)
            rows = [AgentEntry(ids.PRIMARY_AGENT_ID, stored.name, True)]
            rows += [AgentEntry(a, n, False) for a, n in sorted(current.by_agent.items())]
            return rows
