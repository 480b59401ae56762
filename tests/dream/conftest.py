"""White-box fixtures for Dream: a domain over a fresh engine and a scripted model.

``Domain`` stands in for the composition root: one lock, the three mirrors,
the decline memory, and ``env()`` building a ``DreamEnv`` whose ``hold`` takes
that lock. ``Scripted`` answers the three model operations from test-set
values, counts calls, and records whether the calling thread held the domain lock at each call.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from memhop.domain.mirrors import Mirrors
from memhop.dream import DreamEnv, Held
from memhop.engine import Engine, create_engine
from memhop.index.l2meta import L2Meta
from memhop.index.l4 import L4Index
from memhop.index.plans import PlanTrees
from memhop.layers import archive, plan, topic
from memhop.llm import Distillation, Group, NodeDigest, TopicDigest, Usage
from memhop.records import TopicSlot
from tests.writes import write_turn_topic

SCENE = 7
NOW = 1_700_000_000_000


class Scripted:
    """A ``Model`` whose answers the test sets; counts calls and the lock state at each."""

    def __init__(self, held_here: Callable[[], bool] = lambda: False) -> None:
        self.held_here = held_here
        self.calls: Counter[str] = Counter()
        self.locked_during_call: list[bool] = []
        self.groups: Callable[[Sequence[TopicDigest]], Sequence[Group]] = lambda _t: ()
        self.keywords: Callable[[str], Sequence[str]] = lambda text: tuple(text.split())
        self.distillation = Distillation(0.8, 0.6, 0.5, 0.2, 0.3, -0.1, 0.4, "steady")
        self.listings: list[tuple[TopicDigest, ...]] = []

    def _note(self, op: str) -> None:
        self.calls[op] += 1
        self.locked_during_call.append(self.held_here())

    def extract_keywords(self, text: str, *, cancel: threading.Event | None = None) -> Any:
        self._note("keywords")
        return tuple(self.keywords(text))

    def consolidate(
        self, topics: Sequence[TopicDigest], floor: int, *, cancel: threading.Event | None = None
    ) -> Any:
        self._note("consolidate")
        self.listings.append(tuple(topics))
        return tuple(self.groups(topics))

    def distill(
        self, samples: Sequence[NodeDigest], *, cancel: threading.Event | None = None
    ) -> Any:
        self._note("distill")
        return self.distillation

    def usage(self) -> Usage:
        return Usage()


class Domain:
    """One agent domain (id 0) over an engine, with the root's bookkeeping."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.agent_id = 0
        self.lock = threading.Lock()
        self.declined: dict[int, object] = {}
        self.owner: int | None = None
        self.mirrors = self.load()
        self.model = Scripted(lambda: self.owner == threading.get_ident())

    def load(self) -> Mirrors:
        return Mirrors(
            topics=L2Meta.from_topics(topic.all_topics_strict(self.engine, 0)),
            contents=L4Index.from_records(archive.all_contents(self.engine, 0)),
            plans=PlanTrees.from_nodes(
                plan.read_plan_nodes_strict(self.engine, 0, plan.plan_node_ids(self.engine, 0))
            ),
        )

    @contextlib.contextmanager
    def hold(self, until: float = math.inf) -> Iterator[Held]:
        """The domain lock; ``until`` as ``Held.until`` (-inf: the hold's time is spent at
        once, so a bounded stage does one unit a hold)."""
        with self.lock:
            self.owner = threading.get_ident()
            try:
                yield Held(self.engine, self.agent_id, self.mirrors, self.declined, until)
            finally:
                self.owner = None

    def spent_hold(self) -> contextlib.AbstractContextManager[Held]:
        return self.hold(-math.inf)

    def env(
        self,
        *,
        floor: int = 2,
        retention_ms: int = 0,
        clock: Callable[[], int] = lambda: NOW,
        cancel: threading.Event | None = None,
        spent: bool = False,
    ) -> DreamEnv:
        """A pass's inputs; ``spent``: every hold's time is spent at once (``spent_hold``)."""
        return DreamEnv(
            agent_id=self.agent_id,
            hold=self.spent_hold if spent else self.hold,
            model=self.model,
            clock=clock,
            floor=floor,
            retention_ms=retention_ms,
            cancel=cancel or threading.Event(),
        )

    def turn(
        self,
        topic_id: int,
        keywords: Sequence[str] = ("login",),
        user_ts: int = 1000,
        agent_ts: int | None = None,
        scene: int = SCENE,
    ) -> TopicSlot:
        row = write_turn_topic(
            self.engine,
            0,
            scene,
            topic_id,
            keywords,
            user_ts,
            user_ts + 1 if agent_ts is None else agent_ts,
        )
        self.mirrors.topics.put(row)
        return row

    def row(self, topic_id: int) -> TopicSlot | None:
        return topic.get_topic_optional(self.engine, 0, topic_id)


@pytest.fixture
def engine(meh_path: str) -> Iterator[Engine]:
    eng = create_engine(meh_path)
    yield eng
    if not eng.closed:
        eng.close()


@pytest.fixture
def dom(engine: Engine) -> Domain:
    return Domain(engine)


def fold(*members: int, summary: str = "they talked about login") -> Group:
    return Group(member_ids=tuple(members), summary=summary)
