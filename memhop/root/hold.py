"""The hold of one domain's lock that every call of the API enters (``Root.domain``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memhop.domain.context import DomainContext
from memhop.frozen import quick_init

if TYPE_CHECKING:
    from memhop.root.root import Root


@quick_init
@dataclass(slots=True, eq=False)
class DomainHold:
    """``Root.domain``: one domain's lock held for a body; a class, not a generator, and
    built in C (``quick_init``), since every call of the API enters one."""

    _root: Root
    _agent_id: int
    _scene_op: bool
    _background: bool
    _ctx: DomainContext | None = None  # the domain held, from __enter__ to __exit__

    def __enter__(self) -> DomainContext:
        root = self._root
        while True:
            ctx = root.context(self._agent_id)
            warm = ctx.warm
            if warm is not None and not self._scene_op:
                warm.join()  # without the domain lock: its scene reads go on meanwhile
            if not ctx.lock.acquire(False):  # positional: no keyword parsing a call
                ctx.lock_wanted = True  # a Dream pass lets this call go before its next hold
                try:
                    ctx.lock.acquire()
                finally:  # an interrupted wait leaves no mark behind
                    ctx.lock_wanted = False
            if not ctx.reclaimed:
                break
            ctx.lock.release()
        try:
            if root.closed:  # asked here first: the refusal is a call, and a hold is every call's
                root.check_open()
            ctx.last_used_ms = root.clock()
            if not self._background:
                ctx.host_calls += 1
            if not self._scene_op:
                ctx.mirrors  # noqa: B018  # a warm domain's build ends before the body runs
            elif ctx.warm is not None:
                ctx.warm.check(root.engine, ctx.agent_id)  # before the body's first write
        except BaseException:
            ctx.lock.release()
            raise
        self._ctx = ctx
        return ctx

    def __exit__(self, *_: object) -> None:
        ctx = self._ctx
        assert ctx is not None, "a hold is left only after it was entered"
        if ctx.warm is not None:
            ctx.warm.start()  # the scene was read: build the rest while the host goes on
        ctx.lock.release()
