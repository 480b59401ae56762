"""What a Dream pass is handed: a way to take the domain lock, the model, the clock.

The pass never holds the domain lock across a model call. ``DreamEnv.hold()``
takes the lock and yields a ``Held`` view (engine, domain id, live mirrors,
the per-scene decline memory); the view is valid only inside the ``with``.
The model is called outside it, and whatever a stage decided from an earlier
view is re-checked inside the next one before anything is written.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, MutableMapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from memhop.index.l2meta import L2Meta
from memhop.index.l4 import L4Index
from memhop.index.plans import PlanTrees
from memhop.llm import Model

if TYPE_CHECKING:  # the type only: dream reaches the file through the layers
    from memhop.engine import Engine

__all__ = ["HOLD_S", "AnyEvent", "DreamEnv", "Held", "MirrorsLike"]

HOLD_S = 0.001
"""How long a bounded stage works under one hold of the domain lock before it lets go
(``Held.over``), past the unit at hand: about what a young memory's holds take, so a
turn waits no longer on Dream as the memory ages. A hold also holds the interpreter
throughout: a host thread back from its own I/O waits out the rest of it (with 2 ms
holds, Dream's holds overlapped the slowest 1% of turns by about 4 ms a turn)."""

_POLL_S = 0.05


class MirrorsLike(Protocol):
    """The domain's mirrors; Dream keeps them current after each write it makes."""

    topics: L2Meta
    contents: L4Index
    plans: PlanTrees
    dream: object  # Dream's own state of the domain (``dream.state``); None until then


@dataclass(slots=True)
class Held:
    """The domain as seen while its lock is held (do not keep it past the ``with``)."""

    engine: Engine
    agent_id: int
    mirrors: MirrorsLike
    declined: MutableMapping[int, object]
    """Per scene: the listing a consolidation was declined on (beyond upstream)."""
    until: float = float("inf")
    """The ``time.monotonic()`` by which a bounded stage lets go (``over``); none by default."""

    def over(self) -> bool:
        """Whether the hold has run its time: a bounded stage stops after the unit at hand,
        leaving the rest to its next hold (the first unit of a hold is always done)."""
        return time.monotonic() >= self.until


@dataclass(frozen=True, slots=True)
class DreamEnv:
    """One pass's inputs. ``hold`` takes the domain lock; ``cancel`` ends the pass."""

    agent_id: int
    hold: Callable[[], AbstractContextManager[Held]]
    model: Model
    clock: Callable[[], int]
    floor: int
    retention_ms: int
    cancel: threading.Event
    sweep_unfolded: bool = False


class AnyEvent(threading.Event):
    """An event that reads as set when it, or any of its sources, is set.

    Handed to the model as its ``cancel``: the host's event and the file's
    "closing" event both stop a call. ``wait`` polls the sources.
    """

    def __init__(self, *sources: threading.Event | None) -> None:
        super().__init__()
        self._sources = tuple(s for s in sources if s is not None)

    def is_set(self) -> bool:
        return super().is_set() or any(s.is_set() for s in self._sources)

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            step = _POLL_S if deadline is None else min(_POLL_S, deadline - time.monotonic())
            if step <= 0:
                return False
            super().wait(step)
        return True
