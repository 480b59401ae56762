"""The operations of one domain: each runs a root function inside the domain's lock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from memhop.domain.context import DomainContext
from memhop.engine import Engine
from memhop.root import turn
from memhop.root.root import Root

P = ParamSpec("P")
R = TypeVar("R")


class AgentOps:
    """One domain of one root, as the facade sees it."""

    def __init__(self, root: Root, agent_id: int) -> None:
        self.root = root
        self.agent_id = agent_id

    def now(self) -> int:
        """The root's clock, in milliseconds."""
        return self.root.clock()

    def tenant(self) -> str | None:
        """The domain's registered name (None for the primary); takes the registry lock."""
        return self.root.tenant_name(self.agent_id)

    def run(
        self,
        op: Callable[Concatenate[Engine, DomainContext, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """Call ``op(engine, ctx, *args, **kwargs)`` holding this domain's lock."""
        with self.root.domain(self.agent_id) as ctx:
            return op(self.root.engine, ctx, *args, **kwargs)

    def prepare_recall(self) -> None:
        """Decode the domain's saved recall state, if the file holds one, without its lock."""
        self.root.recall_file.prepare(self.agent_id)

    def open_turn(self, scene_id: int, l3_id: int, new_scene: bool) -> turn.Opened:
        """``run`` ``turn.search`` at the time the hold was taken (the root's clock, read
        there), whose one write needs no fsync of its own but on a new scene.

        It bumps the scene's turn counter, and the turn's next write (an
        event, its lines) syncs the file, this record with it: a crash before
        that forgets an open turn under which nothing was recorded, and the
        next search opens it again under the same id. A scene's first turn is
        synced at once: its id goes to the host, which may keep it.
        """
        with self.root.domain(self.agent_id, scene_op=True) as ctx:
            engine = self.root.engine
            with engine.deferred():
                opened = turn.search(engine, ctx, ctx.last_used_ms, scene_id, l3_id, new_scene)
            if opened.scene.turn_seq == 1:
                engine.sync()
            return opened

    def on_scene(
        self,
        op: Callable[Concatenate[Engine, DomainContext, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """``run`` a read of one scene or a write to its open turn, which a warm domain
        answers (takes) before its build ends."""
        with self.root.domain(self.agent_id, scene_op=True) as ctx:
            return op(self.root.engine, ctx, *args, **kwargs)

    def run_in_turn(
        self,
        op: Callable[Concatenate[Engine, DomainContext, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """``on_scene`` for a host's write to the open turn: with durability "turn"
        without an fsync of its own (``update`` makes it)."""
        with self.root.domain(self.agent_id, scene_op=True) as ctx:
            engine = self.root.engine
            if self.root.defaults.durability != "turn":
                return op(engine, ctx, *args, **kwargs)
            with engine.deferred():
                return op(engine, ctx, *args, **kwargs)

    def delete(
        self,
        op: Callable[Concatenate[Engine, DomainContext, P], None],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> None:
        """``run`` a delete, then (the lock released) the root's dead-bytes policy."""
        self.run(op, *args, **kwargs)
        self.root.compact_if_due()

    def purge(
        self,
        op: Callable[Concatenate[Engine, DomainContext, P], None],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> None:
        """``run`` a delete, then compact the file in place whatever the policy says.

        Returns once the deleted bytes are gone from the file; a compaction
        that fails raises (the delete stands).
        """
        self.run(op, *args, **kwargs)
        self.root.compact()
