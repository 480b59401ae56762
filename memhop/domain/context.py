"""One agent domain in memory: its lock, its model, its mirrors and its open turn.

The hold of its lock that every call of the API enters is the root's
(``memhop.root.hold``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from memhop.domain.mirrors import Mirrors
from memhop.domain.recall_file import Saved
from memhop.domain.slot_cache import SlotCache
from memhop.domain.warm import Part, WarmStart
from memhop.engine import Engine
from memhop.frozen import quick_init
from memhop.index.recall import RecallIndex
from memhop.llm import (
    Distillation,
    Group,
    LocalModel,
    Model,
    NodeDigest,
    ReportsUsage,
    TopicDigest,
    Usage,
)

T = TypeVar("T")
_NOTHING = Usage()  # what a model that reports no usage reports


def _reports_nothing() -> Usage:
    return _NOTHING


class MeteredModel:
    """A domain's model with the domain's own usage count.

    Operations and failed operations are counted here; requests and tokens are
    the difference in the model's own ``usage()`` across each operation. The
    meter survives a change of model (``SubAgent``/``Agent`` re-point a live
    domain), so usage is per domain, not per model object.
    """

    def __init__(self, model: Model) -> None:
        self._lock = threading.Lock()
        # operations, requests, failures, prompt and completion tokens: ints added to in
        # place, a Usage made only when asked (a call would otherwise build one a turn).
        self._counts = [0, 0, 0, 0, 0]
        self.model = model

    @property
    def model(self) -> Model:
        return self._model

    @model.setter
    def model(self, model: Model) -> None:
        # A runtime Protocol check walks the protocol's members: make it once per
        # model, not twice per call.
        self._model = model
        # The offline model makes no requests and spends no tokens (its usage counts the
        # operations, which the meter counts itself): nothing to ask it around each call.
        reported: Callable[[], Usage] = _reports_nothing
        offline = model.__class__ is LocalModel  # a subclass may report what it spends
        if isinstance(model, ReportsUsage) and not offline:
            reported = model.usage
        self._reported = reported

    def usage(self) -> Usage:
        with self._lock:
            return Usage(*self._counts)

    def _metered(self, call: Callable[[], T]) -> T:
        before = self._reported()
        try:
            result = call()
        except BaseException:
            self._add(before, failed=True)
            raise
        self._add(before, failed=False)
        return result

    def _add(self, before: Usage, *, failed: bool) -> None:
        after = self._reported()
        lock = self._lock
        lock.acquire()  # not ``with``: on 3.11 that costs twice the two calls, every turn
        try:
            counts = self._counts
            counts[0] += 1
            counts[2] += failed
            if after is not before:  # a model that reports what it spent (never less)
                counts[1] += max(after.requests - before.requests, 0)
                counts[3] += max(after.prompt_tokens - before.prompt_tokens, 0)
                counts[4] += max(after.completion_tokens - before.completion_tokens, 0)
        finally:
            lock.release()

    def extract_keywords(
        self, text: str, *, cancel: threading.Event | None = None
    ) -> tuple[str, ...]:
        return self._metered(partial(self._model.extract_keywords, text, cancel=cancel))

    def consolidate(
        self, topics: Sequence[TopicDigest], floor: int, *, cancel: threading.Event | None = None
    ) -> tuple[Group, ...]:
        return self._metered(lambda: self.model.consolidate(topics, floor, cancel=cancel))

    def distill(
        self, samples: Sequence[NodeDigest], *, cancel: threading.Event | None = None
    ) -> Distillation:
        return self._metered(lambda: self.model.distill(samples, cancel=cancel))


@quick_init
@dataclass(frozen=True, slots=True)
class OpenTurn:
    """The turn ``search`` opened and ``update`` closes (and may replay)."""

    scene_id: int
    seq: int
    topic_id: int


@dataclass(eq=False)
class DomainContext:
    """Per-domain state; every field is guarded by ``lock`` except the cancel event.

    ``reclaimed`` is set when the idle sweep drops the context: an operation
    that grabbed it before then fetches a fresh one.
    """

    agent_id: int
    model: MeteredModel
    # None while a warm start (``warm``) serves scene reads and the full build runs.
    built: Mirrors | None
    warm: WarmStart | None = None
    slots: SlotCache = field(default_factory=SlotCache)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # A call found the lock held and waits for it (set and cleared around that wait, read
    # without the lock): Dream pauses after a hold so the call takes the lock before the
    # pass's next hold does (a lock is not fair to the thread that does not hold the GIL).
    lock_wanted: bool = False
    # The host's holds so far (Dream's not counted; read without the lock): a long pass
    # that sees it grew since its last hold rests before its next (memhop.root.dreams).
    host_calls: int = 0
    cancel: threading.Event = field(default_factory=threading.Event)
    current_scene: int | None = None
    open_turn: OpenTurn | None = None
    last_stamp: int = 0
    last_used_ms: int = 0  # the root's clock when the current (or last) hold was taken
    reclaimed: bool = False
    # Dream (memhop.root.dreams): per scene, the listing a consolidation was declined
    # on; the hook ``update`` calls with (scene, surface count) after a topic lands, and
    # the one ``search`` calls with (the scene current before it, whether it left that
    # scene, how many ms that scene had been idle) once a turn is open.
    dream_declined: dict[int, object] = field(default_factory=dict)
    dream_swept_at: int = 0  # when the last whole pass began (memhop.root.dreams.run_pass)
    dream_sweeping: int = 0  # whole passes running now
    # The recall state the file's last close saved for the domain, taken once
    # (memhop.domain.recall_file; the root points it at the DB's recall file).
    saved_recall: Callable[[], Saved | None] = lambda: None
    on_turn_settled: Callable[[int, int], None] | None = None
    on_turn_opened: Callable[[int, bool, int], None] | None = None
    # Called under the lock with the domain's recall index when it is due a repack (the
    # root runs it on a background thread: memhop.root.recall_upkeep).
    on_repack_due: Callable[[RecallIndex], None] | None = None

    @property
    def mirrors(self) -> Mirrors:
        """The domain's mirrors; a warm domain waits here for its full build."""
        if self.built is None:
            assert self.warm is not None
            self._adopt(self.warm.join())
        assert self.built is not None
        return self.built

    def _adopt(self, built: Mirrors) -> None:
        """Take a warm domain's full build, with the turn writes its views took meanwhile
        (most of them taken by the build's thread before this hold: ``WarmStart.left``).

        Each change puts a record as written, so applying one the build already
        read changes nothing; they are applied in the order they were made.
        """
        assert self.warm is not None
        if self.warm.recall is not None:  # served from the views: the build takes it over,
            built.recall = self.warm.recall  # noting the changes the views took meanwhile
            built.topics.journal.drain()
            built.contents.journal.drain()
            # The build took most of them before this hold, unwatched (``_catch_up``): what
            # the views noted since the state last read them is what it has to redo.
            for topic_id in self.warm.drain_views():
                built.topics.journal.note(topic_id)
        for change in self.warm.left():
            change(built)
        self.built, self.warm = built, None

    def drop_recall(self) -> None:
        """Let go of the recall state (at close): a state read back views the recall
        file's mapped pages, which go with the last view of them."""
        if self.built is not None:
            self.built.recall = None
        if self.warm is not None:
            self.warm.recall = None

    def settled_mirrors(self) -> Mirrors | None:
        """The full mirrors if built, a warm domain's included, without waiting for a build."""
        if self.built is None and self.warm is not None:
            done = self.warm.result()
            if done is not None:
                self._adopt(done)
        return self.built

    def mirrors_of_scene(self, scene_id: int) -> Mirrors | None:
        """What answers a scene without reading or waiting: the full mirrors, or a warm
        domain's view of it if it made one; None otherwise."""
        if self.built is not None:
            return self.built
        return None if self.warm is None else self.warm.view_of(scene_id)

    def scene_mirrors(self, engine: Engine, scene_id: int) -> Mirrors:
        """Mirrors that answer reads of one scene: a warm domain's view of it, if it has one."""
        if self.built is not None:  # the usual domain: built
            return self.built
        if self.warm is not None:
            view = self.warm.scene_mirrors(engine, self.agent_id, scene_id, self.slots)
            if view is not None:
                return view
        return self.mirrors

    def scene_reading(self, engine: Engine, scene_id: int, part: Part) -> Mirrors:
        """Mirrors that answer the reads ``part`` names in one scene: the full mirrors, or
        a warm domain's view of the scene or reading of that part alone
        (``WarmStart.reading``)."""
        if self.built is None and self.warm is not None:
            found = self.warm.reading(engine, self.agent_id, scene_id, part, self.slots)
            if found is not None:
                return found
        return self.mirrors

    def apply(self, engine: Engine, scene_id: int, change: Callable[[Mirrors], T]) -> T:
        """Make a turn write of ``scene_id`` in the mirrors; return what ``change`` returns.

        A warm domain takes it in its view of the scene now, and in its full
        build once that is made, so a turn needs no more than its scene.
        """
        mirrors = self.scene_mirrors(engine, scene_id)
        if mirrors is not self.built:  # a warm view: the full build takes the change too
            assert self.warm is not None
            self.warm.pending.append(change)
        return change(mirrors)

    def next_stamp(self, now_ms: int) -> int:
        """Return a per-domain strictly increasing millisecond stamp."""
        stamp = self.last_stamp + 1
        self.last_stamp = stamp = now_ms if now_ms > stamp else stamp
        return stamp
